#!/usr/bin/env python3
"""Judge a Narad chaos-test history: PASS, FAIL or UNKNOWN.

A chaos run records every client operation (produce, deliver, ack/nack) and every injected
fault as JSON Lines; this checker replays that history against the delivery contract,
at-least-once: duplicates are allowed, gaps never.

Time is in nanoseconds on one monotonic clock. Every fault record is a *fault window*
[start_ns, end_ns + fault_grace_ms]; a fault without end_ns lasts until the last operation.
"Intersects" means two closed intervals share at least one instant. Deliveries whose payload
is corrupted (checksum_ok false or id null) are reported once and take no part in the other
rules, since their id cannot be trusted.

Failure rules (any one makes the verdict FAIL):
  lost                an acknowledged produce (outcome ok) whose id is never delivered and,
                      in faults mode, is in no set-aside copy either (those are counted as
                      stranded: on disk, for an operator to recover, never served).
  corrupted           a delivery with checksum_ok false or id null.
  offset_conflict     one (topic, partition, offset) delivered with two different ids, unless
                      (faults mode) a set-aside copy of the partition (meta quarantined) holds
                      one of the two ids at that offset: two copies diverged, one was kept
                      aside. Counted as diverged_offsets.
  two_partitions      one id delivered from two (topic, partition) pairs, unless a fault window
                      intersects [produce call_ns, later of the two deliveries' return_ns].
                      Never excused in strict mode.
  refused_delivered   a produce with outcome refused whose id is delivered.
  acked_redelivered   a delivery whose consume call_ns is after the return_ns of a confirmed
                      ack (kind ack, outcome ok) of the same id, unless a fault window
                      intersects [ack return_ns - visibility_ms, delivery return_ns]. The ack
                      judged is the latest confirmed one returned before the consume call.
                      Never excused in strict mode.
  lease_overlap       deliveries d1, d2 of one id to different clients with
                      each granted before the other could have ended: d2.return_ns and
                      d1.return_ns both before the other's end bound, the call_ns of its
                      first ok ack/nack or its call_ns + visibility_ms, unless a fault window intersects
                      [d1.call_ns, d2.return_ns]; in strict mode only windows of kind join,
                      decommission, abort or move excuse it.
  frontier_backwards  a delivery after a confirmed ack (as for acked_redelivered) with no
                      crash-class fault (kill, restart, crash, lose_unsynced; no grace) active
                      anywhere in [ack call_ns, delivery return_ns]. Judged independently of
                      acked_redelivered: an acked message may come back only after a crash.
  overdue             the end record is missing or says drained false.
  strict_duplicate    strict mode only: an unexplained duplicate (see below) that is not
                      already an acked_redelivered failure.

Duplicates: every delivery of an id after its first (ordered by consume call_ns). One is
explained if (faults mode only) a fault window intersects [first delivery call_ns, its
return_ns], or another delivery of the id whose consume was called before this one returned
(concurrent consumes return in any order, so either of the two may have been granted first)
was nacked, got a refused/ambiguous ack, was never acked at all, or may have run out (the
other's return_ns >= its call_ns + visibility_ms), with the roles of the two swapped too.

UNKNOWN (only when nothing failed): fewer than min_produced ok produces; in faults mode,
fault windows covering more than 90% of [start, healed or last operation]; deliveries of ids
that no produce record names (the history is incomplete); crash-class faults in a strict run.

Unreadable (exit 3): a line that is not JSON, a first record that is not meta start, an
unknown op, a missing or mistyped field, return_ns before call_ns, a reused produce id.

Usage: check_history.py HISTORY [--json OUT] [--max-report N]
Exit status: 0 PASS, 1 FAIL, 2 UNKNOWN, 3 unreadable history.
"""

import argparse
import bisect
import gc
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

NS_PER_MS = 1_000_000
CRASH_KINDS = frozenset({"kill", "restart", "crash", "lose_unsynced"})
STRICT_EXEMPT_KINDS = frozenset({"join", "decommission", "abort", "move"})
OUTCOMES = frozenset({"ok", "refused", "ambiguous"})
ACK_KINDS = frozenset({"ack", "nack"})
MODES = frozenset({"faults", "strict"})
MAX_FAULT_COVERAGE = 0.9
RULES = (
    "lost", "corrupted", "offset_conflict", "two_partitions", "refused_delivered",
    "acked_redelivered", "lease_overlap", "frontier_backwards", "overdue", "strict_duplicate",
)
EXIT_CODES = {"PASS": 0, "FAIL": 1, "UNKNOWN": 2}
EXIT_UNREADABLE = 3
DEFAULT_MAX_REPORT = 20
_REQUIRED = object()
_DELIVERY_ORDER = attrgetter("call", "ret", "line")
_ACK_ORDER = attrgetter("ret")


class HistoryError(Exception):
    """The history cannot be judged: a line is not JSON or a record is malformed."""

    def __init__(self, line_no: int, message: str) -> None:
        super().__init__(f"line {line_no}: {message}")
        self.line_no = line_no


@dataclass(slots=True)
class Config:
    """Run parameters taken from the start record."""

    mode: str
    seed: Any
    visibility_ns: int
    grace_ns: int
    min_produced: int
    start_ns: int


@dataclass(slots=True)
class Produce:
    """One produce attempt."""

    id: int | str
    outcome: str
    status: Any
    node: Any
    call: int
    ret: int
    line: int


@dataclass(slots=True)
class Delivery:
    """One intact message handed to a consumer by a consume request."""

    id: int | str
    topic: str
    partition: int
    offset: int
    handle: str
    client: str
    call: int
    ret: int
    line: int


@dataclass(slots=True)
class ConfirmedAck:
    """An ack (kind ack) that the server confirmed (outcome ok)."""

    handle: str
    client: str
    call: int
    ret: int
    line: int


@dataclass(slots=True)
class Failure:
    """One rule violation: the ids involved, the instants that matter, the history lines."""

    rule: str
    ids: list[Any]
    detail: str
    times: dict[str, int]
    lines: list[int]

    def to_json(self) -> dict:
        """Return the failure as a JSON-ready dict."""
        return {"ids": self.ids, "detail": self.detail, "times": self.times,
                "lines": self.lines}

    def to_text(self) -> str:
        """Return the failure as one human-readable line."""
        ids = ",".join(str(i) for i in self.ids) or "-"
        times = " ".join(f"{name}={value}" for name, value in self.times.items())
        lines = ",".join(str(n) for n in self.lines)
        return f"{self.rule}: ids={ids} {self.detail} [{times}] (lines {lines})"


@dataclass
class Result:
    """The verdict with its counts, failures by rule and reasons for UNKNOWN."""

    verdict: str
    counts: dict[str, Any]
    failures: dict[str, list[Failure]]
    unknown_reasons: list[str]

    @property
    def exit_code(self) -> int:
        """Return the process exit status for this verdict."""
        return EXIT_CODES[self.verdict]

    def to_json(self, max_report: int = DEFAULT_MAX_REPORT) -> dict:
        """Return the result as a JSON-ready dict, keeping max_report failures per rule."""
        return {
            "verdict": self.verdict,
            "counts": self.counts,
            "failures": {rule: [f.to_json() for f in items[:max_report]]
                         for rule, items in self.failures.items()},
            "failure_totals": {rule: len(items) for rule, items in self.failures.items()},
            "unknown_reasons": self.unknown_reasons,
        }

    def to_text(self, max_report: int = DEFAULT_MAX_REPORT) -> str:
        """Return the human summary: verdict line first, then counts, then failures."""
        c = self.counts
        faults = " ".join(f"{kind}={n}" for kind, n in sorted(c["faults_by_kind"].items()))
        out = [
            f"verdict: {self.verdict}",
            f"mode: {c['mode']}  seed: {c['seed']}",
            f"produced: ok={c['produced_ok']} refused={c['produced_refused']} "
            f"ambiguous={c['produced_ambiguous']}",
            f"delivered: {c['delivered']} (distinct ids {c['distinct_delivered']}, "
            f"unproduced ids {c['delivered_unproduced']})",
            f"acks: ok={c['acks_ok']} refused={c['acks_refused']} "
            f"ambiguous={c['acks_ambiguous']}  nacks ok={c['nacks_ok']}",
            f"faults: {c['faults']} {faults}".rstrip(),
            f"lost: {c['lost']}  corrupted: {c['corrupted']}  stranded in set-aside copies: "
            f"{c['stranded']}  diverged offsets: {c['diverged_offsets']}",
            f"duplicates: explained={c['duplicates_explained']} "
            f"unexplained={c['duplicates_unexplained']}",
            f"fault coverage: {c['fault_coverage']:.4f}",
        ]
        out.extend(f"unknown: {reason}" for reason in self.unknown_reasons)
        for rule, items in self.failures.items():
            out.append(f"failures {rule}: {len(items)}")
            out.extend(f"  {failure.to_text()}" for failure in items[:max_report])
            if len(items) > max_report:
                out.append(f"  ... {len(items) - max_report} more")
        return "\n".join(out)


class Windows:
    """Merged, sorted closed intervals that answer intersection queries with bisect."""

    def __init__(self, intervals: Iterable[tuple[int, int]]) -> None:
        starts: list[int] = []
        ends: list[int] = []
        for lo, hi in sorted(intervals):
            if ends and lo <= ends[-1]:
                ends[-1] = max(ends[-1], hi)
            else:
                starts.append(lo)
                ends.append(hi)
        self.starts = starts
        self.ends = ends

    def intersects(self, lo: int, hi: int) -> bool:
        """Tell whether any interval shares an instant with [lo, hi]."""
        i = bisect.bisect_left(self.ends, lo)
        return i < len(self.starts) and self.starts[i] <= hi

    def covered(self, lo: int, hi: int) -> int:
        """Return how many nanoseconds of [lo, hi] the intervals cover."""
        return sum(max(0, min(end, hi) - max(start, lo))
                   for start, end in zip(self.starts, self.ends))


def _int(record: dict, name: str, line_no: int, default: Any = _REQUIRED) -> Any:
    """Return an integer field; a missing field gives default or, without one, an error."""
    value = record.get(name, _REQUIRED)
    if type(value) is int:  # exact type: a JSON true/false must not pass as 1/0
        return value
    if value is _REQUIRED:
        if default is _REQUIRED:
            raise HistoryError(line_no, f"missing field {name!r}")
        return default
    raise HistoryError(line_no, f"field {name!r} must be an integer, got {value!r}")


def _str(record: dict, name: str, line_no: int, choices: frozenset | None = None) -> str:
    """Return a required string field, optionally one of a fixed set."""
    value = record.get(name)
    if type(value) is not str:
        raise HistoryError(line_no, f"field {name!r} must be a string, got {value!r}")
    if choices is not None and value not in choices:
        raise HistoryError(line_no, f"field {name!r} must be one of {sorted(choices)}")
    return value


def _id(record: dict, line_no: int, nullable: bool) -> int | str | None:
    """Return the message id field (an integer or a string, null only if allowed)."""
    value = record.get("id")
    if type(value) is int or type(value) is str or (value is None and nullable):
        return value
    raise HistoryError(line_no, f"field 'id' must be an integer or string, got {value!r}")


def _span(record: dict, line_no: int) -> tuple[int, int]:
    """Return (call_ns, return_ns) of an operation record."""
    call = _int(record, "call_ns", line_no)
    ret = _int(record, "return_ns", line_no)
    if ret < call:
        raise HistoryError(line_no, f"return_ns {ret} is before call_ns {call}")
    return call, ret


def _where(d: Delivery) -> str:
    """Return a delivery's position as topic/partition@offset."""
    return f"{d.topic}/{d.partition}@{d.offset}"


class Checker:
    """Reads history records one by one, then judges them all in finish()."""

    def __init__(self) -> None:
        self.config: Config | None = None
        self.last_ns = 0
        self.healed_ns: int | None = None
        # What the copies nodes set aside hold (meta quarantined): (topic, partition) ->
        # {offset: ids}, and every id found in one.
        self.quarantined: dict[tuple[str, int], dict[int, set]] = {}
        self.quarantined_ids: set = set()
        self.stranded = 0
        self.diverged = 0
        self.end_record: dict | None = None
        self.produces: dict[Any, Produce] = {}
        self.deliveries: dict[Any, list[Delivery]] = defaultdict(list)
        self.delivered_count = 0
        # Lease state per handle: earliest call_ns of an ok ack/nack (the lease may have ended
        # from then on), and the handles that were nacked or got an unconfirmed ack. A handle in
        # neither was never acked.
        self.released: dict[str, int] = {}
        self.given_up: set[str] = set()
        self.confirmed: dict[Any, list[ConfirmedAck]] = defaultdict(list)
        self.confirmed_without_id: list[ConfirmedAck] = []
        self.ack_counts: Counter = Counter()
        self.faults: list[tuple[str, int, int | None]] = []
        self.failures: dict[str, list[Failure]] = defaultdict(list)
        self.handlers = {"produce": self._add_produce, "deliver": self._add_delivery,
                         "ack": self._add_ack, "fault": self._add_fault,
                         "meta": self._add_meta}

    def add(self, record: Any, line_no: int) -> None:
        """Validate and index one history record."""
        if not isinstance(record, dict):
            raise HistoryError(line_no, "record is not a JSON object")
        op = record.get("op")
        if self.config is None:
            if op != "meta" or record.get("event") != "start":
                raise HistoryError(line_no, "history must begin with the meta start record")
            self._add_start(record, line_no)
            return
        handler = self.handlers.get(op)
        if handler is None:
            raise HistoryError(line_no, f"unknown op {op!r}")
        handler(record, line_no)

    def _add_start(self, record: dict, line_no: int) -> None:
        """Read the run parameters."""
        self.config = Config(
            mode=_str(record, "mode", line_no, MODES),
            seed=record.get("seed"),
            visibility_ns=_int(record, "visibility_ms", line_no) * NS_PER_MS,
            grace_ns=_int(record, "fault_grace_ms", line_no) * NS_PER_MS,
            min_produced=_int(record, "min_produced", line_no),
            start_ns=_int(record, "call_ns", line_no, 0),
        )
        self.last_ns = self.config.start_ns

    def _seen(self, ns: int) -> None:
        """Advance the latest instant seen in the history."""
        if ns > self.last_ns:
            self.last_ns = ns

    def _add_meta(self, record: dict, line_no: int) -> None:
        """Record the healed and end markers; other meta events are informational."""
        event = record.get("event")
        at = _int(record, "call_ns", line_no, self.last_ns)
        if event == "start":
            raise HistoryError(line_no, "second meta start record")
        if event == "healed":
            self.healed_ns = at
        elif event == "quarantined":
            self._add_quarantined(record, line_no)
        elif event == "end":
            if not isinstance(record.get("drained"), bool):
                raise HistoryError(line_no, "end record needs a boolean 'drained'")
            self.end_record = record
        self._seen(at)

    def _add_quarantined(self, record: dict, line_no: int) -> None:
        """Keep what one set-aside copy holds: (topic, partition) -> {offset: id}."""
        topic = _str(record, "topic", line_no)
        partition = _int(record, "partition", line_no)
        held = self.quarantined.setdefault((topic, partition), {})
        for entry in record.get("records") or ():
            if not isinstance(entry, list) or len(entry) != 2:
                raise HistoryError(line_no, "quarantined records are [offset, id] pairs")
            held.setdefault(entry[0], set()).add(entry[1])
            self.quarantined_ids.add(entry[1])

    def _add_produce(self, record: dict, line_no: int) -> None:
        """Index one produce attempt by its id."""
        call, ret = _span(record, line_no)
        msg_id = _id(record, line_no, nullable=False)
        if msg_id in self.produces:
            first = self.produces[msg_id].line
            raise HistoryError(line_no, f"produce id {msg_id!r} reused (first at line {first})")
        self.produces[msg_id] = Produce(
            id=msg_id, outcome=sys.intern(_str(record, "outcome", line_no, OUTCOMES)),
            status=record.get("status"), node=record.get("node"),
            call=call, ret=ret, line=line_no)
        self._seen(ret)

    def _add_delivery(self, record: dict, line_no: int) -> None:
        """Report a corrupted delivery, or index an intact one by its id."""
        call, ret = _span(record, line_no)
        msg_id = _id(record, line_no, nullable=True)
        checksum_ok = record.get("checksum_ok")
        if not isinstance(checksum_ok, bool):
            raise HistoryError(line_no, "field 'checksum_ok' must be a boolean")
        delivery = Delivery(
            id=msg_id, topic=sys.intern(_str(record, "topic", line_no)),
            partition=_int(record, "partition", line_no),
            offset=_int(record, "offset", line_no), handle=_str(record, "handle", line_no),
            client=sys.intern(_str(record, "client", line_no)),
            call=call, ret=ret, line=line_no)
        self.delivered_count += 1
        self._seen(ret)
        if msg_id is None or not checksum_ok:
            why = "payload unparseable (id null)" if msg_id is None else "checksum mismatch"
            self._fail("corrupted", [] if msg_id is None else [msg_id],
                       f"{why} at {_where(delivery)} node {record.get('node')}",
                       {"call_ns": call, "return_ns": ret}, [line_no])
            return
        self.deliveries[msg_id].append(delivery)

    def _add_ack(self, record: dict, line_no: int) -> None:
        """Fold one ack or nack into the lease state of its handle."""
        call, ret = _span(record, line_no)
        kind = _str(record, "kind", line_no, ACK_KINDS)
        handle = _str(record, "handle", line_no)
        outcome = _str(record, "outcome", line_no, OUTCOMES)
        msg_id = _id(record, line_no, nullable=True)
        self.ack_counts[kind, outcome] += 1
        self._seen(ret)
        if outcome == "ok" and call < self.released.get(handle, call + 1):
            self.released[handle] = call
        if kind == "nack" or outcome != "ok":
            self.given_up.add(handle)
            return
        ack = ConfirmedAck(handle, sys.intern(str(record.get("client", ""))), call, ret,
                           line_no)
        if msg_id is None:
            self.confirmed_without_id.append(ack)
        else:
            self.confirmed[msg_id].append(ack)

    def _add_fault(self, record: dict, line_no: int) -> None:
        """Keep one fault as (kind, start_ns, end_ns or None while open)."""
        kind = sys.intern(_str(record, "kind", line_no))
        start = _int(record, "start_ns" if "start_ns" in record else "call_ns", line_no)
        end_field = "end_ns" if "end_ns" in record else "return_ns"
        end = None if record.get(end_field) is None else _int(record, end_field, line_no)
        if end is not None and end < start:
            raise HistoryError(line_no, f"fault end_ns {end} is before start_ns {start}")
        self.faults.append((kind, start, end))
        self._seen(start if end is None else end)

    def _fail(self, rule: str, ids: list[Any], detail: str, times: dict[str, int],
              lines: list[int]) -> None:
        """Record one rule violation."""
        self.failures[rule].append(Failure(rule, ids, detail, times, lines))

    def finish(self) -> Result:
        """Apply every rule to the indexed history and return the verdict."""
        if self.config is None:
            raise HistoryError(0, "history is empty")
        cfg = self.config
        strict = cfg.mode == "strict"
        run_end = self.last_ns
        faults = [(kind, start, run_end if end is None else end)
                  for kind, start, end in self.faults]
        all_windows = Windows((s, e + cfg.grace_ns) for _, s, e in faults)
        lease_windows = Windows((s, e + cfg.grace_ns) for kind, s, e in faults
                                if not strict or kind in STRICT_EXEMPT_KINDS)
        crash_windows = Windows((s, e) for kind, s, e in faults if kind in CRASH_KINDS)

        self._resolve_ack_ids()
        self._check_produces()
        self._check_offsets()
        duplicates: Counter = Counter()
        for msg_id, deliveries in self.deliveries.items():
            if len(deliveries) > 1:
                deliveries.sort(key=_DELIVERY_ORDER)
            acks = self.confirmed.get(msg_id)
            acked = (self._check_acked(msg_id, deliveries, acks, all_windows, crash_windows)
                     if acks else set())
            if len(deliveries) > 1:
                self._check_partitions(msg_id, deliveries, all_windows)
                self._check_leases(msg_id, deliveries, lease_windows)
                self._classify_duplicates(msg_id, deliveries, acked, all_windows, duplicates)
        self._check_end()

        span_end = self.healed_ns if self.healed_ns is not None else run_end
        span = span_end - cfg.start_ns
        coverage = all_windows.covered(cfg.start_ns, span_end) / span if span > 0 else 0.0
        counts = self._counts(faults, duplicates, coverage)
        reasons = self._unknown_reasons(counts, faults, coverage)
        failures = {rule: self.failures[rule] for rule in RULES if self.failures.get(rule)}
        verdict = "FAIL" if failures else "UNKNOWN" if reasons else "PASS"
        return Result(verdict, counts, failures, reasons)

    def _resolve_ack_ids(self) -> None:
        """Attribute confirmed acks that carry no id to the id delivered under their handle."""
        if not self.confirmed_without_id:
            return
        id_by_handle = {d.handle: d.id for ds in self.deliveries.values() for d in ds}
        for ack in self.confirmed_without_id:
            msg_id = id_by_handle.get(ack.handle)
            if msg_id is not None:
                self.confirmed[msg_id].append(ack)

    def _check_produces(self) -> None:
        """Rules lost and refused_delivered."""
        for produce in self.produces.values():
            deliveries = self.deliveries.get(produce.id)
            times = {"produce_call_ns": produce.call, "produce_return_ns": produce.ret}
            if produce.outcome == "ok" and not deliveries:
                if self.config.mode == "faults" and produce.id in self.quarantined_ids:
                    self.stranded += 1  # kept on disk in a set-aside copy, not served
                    continue
                self._fail("lost", [produce.id],
                           f"produce accepted (node {produce.node}) but never delivered",
                           times, [produce.line])
            elif produce.outcome == "refused" and deliveries:
                first = min(deliveries, key=_DELIVERY_ORDER)
                times["delivery_return_ns"] = first.ret
                self._fail("refused_delivered", [produce.id],
                           f"produce refused (status {produce.status}) but delivered "
                           f"{len(deliveries)} time(s), first at {_where(first)}",
                           times, [produce.line, first.line])

    def _check_offsets(self) -> None:
        """Rule offset_conflict: one id per (topic, partition, offset)."""
        owner: dict[tuple[str, int, int], Delivery] = {}
        reported: set[tuple[tuple[str, int, int], Any]] = set()
        for deliveries in self.deliveries.values():
            for d in deliveries:
                key = (d.topic, d.partition, d.offset)
                first = owner.setdefault(key, d)
                if first.id != d.id and (key, d.id) not in reported:
                    reported.add((key, d.id))
                    if self._diverged(key, first.id, d.id):
                        self.diverged += 1
                        continue
                    self._fail("offset_conflict", [first.id, d.id],
                               f"{_where(d)} delivered with two ids",
                               {"first_return_ns": first.ret, "other_return_ns": d.ret},
                               [first.line, d.line])

    def _diverged(self, key: tuple[str, int, int], one: Any, other: Any) -> bool:
        """Whether a conflict at key is two copies of the partition that diverged, one of them
        set aside: faults mode only, and a quarantined copy of the partition holds one of the
        two ids at that very offset (a force-promote over a source that only looked dead)."""
        if self.config.mode != "faults":
            return False
        held = self.quarantined.get((key[0], key[1]), {}).get(key[2], ())
        return one in held or other in held

    def _check_acked(self, msg_id: Any, deliveries: list[Delivery], acks: list[ConfirmedAck],
                     all_windows: Windows, crash_windows: Windows) -> set[int]:
        """Rules acked_redelivered and frontier_backwards; return indexes flagged by the first."""
        flagged: set[int] = set()
        if len(acks) > 1:
            acks.sort(key=_ACK_ORDER)
        if acks[0].ret >= deliveries[-1].call:
            return flagged
        cfg = self.config
        ack_returns = [a.ret for a in acks]
        for index, d in enumerate(deliveries):
            before = bisect.bisect_left(ack_returns, d.call)
            if before == 0:
                continue
            ack = acks[before - 1]
            times = {"ack_call_ns": ack.call, "ack_return_ns": ack.ret,
                     "delivery_call_ns": d.call, "delivery_return_ns": d.ret}
            lines = [ack.line, d.line]
            excused = (cfg.mode != "strict"
                       and all_windows.intersects(ack.ret - cfg.visibility_ns, d.ret))
            if not excused:
                flagged.add(index)
                self._fail("acked_redelivered", [msg_id],
                           f"delivered to {d.client} at {_where(d)} after a confirmed ack "
                           f"by {ack.client}", times, lines)
            if not crash_windows.intersects(ack.call, d.ret):
                self._fail("frontier_backwards", [msg_id],
                           f"acked message came back at {_where(d)} with no crash or "
                           "restart since the ack", times, lines)
        return flagged

    def _check_partitions(self, msg_id: Any, deliveries: list[Delivery],
                          all_windows: Windows) -> None:
        """Rule two_partitions, judged on the two partitions delivered earliest."""
        earliest: dict[tuple[str, int], Delivery] = {}
        for d in deliveries:
            key = (d.topic, d.partition)
            if key not in earliest or d.ret < earliest[key].ret:
                earliest[key] = d
        if len(earliest) < 2:
            return
        first, second = sorted(earliest.values(), key=attrgetter("ret", "line"))[:2]
        produce = self.produces.get(msg_id)
        since = produce.call if produce is not None else deliveries[0].call
        if self.config.mode != "strict" and all_windows.intersects(since, second.ret):
            return
        places = ", ".join(f"{topic}/{partition}" for topic, partition in earliest)
        self._fail("two_partitions", [msg_id], f"delivered from {places}",
                   {"produce_call_ns": since, "first_return_ns": first.ret,
                    "second_return_ns": second.ret}, [first.line, second.line])

    def _lease_end_bound(self, delivery: Delivery, visibility: int) -> int:
        """The earliest time a delivery's lease may have ended: its release was sent, or it
        ran out."""
        released = self.released.get(delivery.handle)
        expiry = delivery.call + visibility
        return expiry if released is None else min(released, expiry)

    def _check_leases(self, msg_id: Any, deliveries: list[Delivery],
                      lease_windows: Windows) -> None:
        """Rule lease_overlap; each delivery is compared only with the recent earlier ones."""
        visibility = self.config.visibility_ns
        calls = [d.call for d in deliveries]
        for later_index, d2 in enumerate(deliveries):
            # Earlier deliveries whose lease surely outlived d2: d1.call > d2.ret - visibility.
            first_live = bisect.bisect_right(calls, d2.ret - visibility, 0, later_index)
            for d1 in deliveries[first_live:later_index]:
                if d1.client == d2.client:
                    continue
                # Each lease was granted somewhere in its consume's [call, return] and lasted at
                # least until its release was sent or the visibility timeout. They surely
                # overlapped only if each was granted before the other could have ended.
                if (d2.ret >= self._lease_end_bound(d1, visibility)
                        or d1.ret >= self._lease_end_bound(d2, visibility)):
                    continue
                if lease_windows.intersects(d1.call, d2.ret):
                    continue
                self._fail("lease_overlap", [msg_id],
                           f"leased to {d1.client} ({d1.handle}) and to {d2.client} "
                           f"({d2.handle}) within visibility",
                           {"first_call_ns": d1.call, "first_return_ns": d1.ret,
                            "second_call_ns": d2.call, "second_return_ns": d2.ret},
                           [d1.line, d2.line])
                break

    def _classify_duplicates(self, msg_id: Any, deliveries: list[Delivery], acked: set[int],
                             all_windows: Windows, duplicates: Counter) -> None:
        """Count explained and unexplained duplicates; rule strict_duplicate."""
        cfg = self.config
        first = deliveries[0]
        for index in range(1, len(deliveries)):
            d, previous = deliveries[index], deliveries[index - 1]
            # Concurrent consumes may return in either order, so any other delivery that could
            # have been granted first (its consume called before d returned) may be the one d
            # follows: d is explained if one of them was nacked, not surely acked, or could
            # have run out. A strict run has no faults to excuse a duplicate: moves hand leases
            # over, and a lease they break shows as a refused ack.
            explained = ((cfg.mode != "strict" and all_windows.intersects(first.call, d.ret))
                         or any((e.call <= d.ret and self._may_precede(e, d))
                                or (d.call <= e.ret and self._may_precede(d, e))
                                for e in deliveries if e is not d))
            duplicates["explained" if explained else "unexplained"] += 1
            if not explained and cfg.mode == "strict" and index not in acked:
                self._fail("strict_duplicate", [msg_id],
                           f"delivery #{index + 1} to {d.client} at {_where(d)} while "
                           f"{previous.handle} was acked and its lease live",
                           {"previous_return_ns": previous.ret, "call_ns": d.call,
                            "return_ns": d.ret}, [previous.line, d.line])

    def _may_precede(self, earlier: Delivery, later: Delivery) -> bool:
        """Whether `earlier`'s lease may have ended without an ack before `later` was
        granted: nacked, given up, never acked, or run out."""
        return (earlier.handle in self.given_up or earlier.handle not in self.released
                or later.ret >= earlier.call + self.config.visibility_ns)

    def _check_end(self) -> None:
        """Rule overdue."""
        if self.end_record is None:
            self._fail("overdue", [], "history has no end record", {}, [])
        elif not self.end_record["drained"]:
            self._fail("overdue", [], "driver gave up draining (drained false)",
                       {"end_ns": self.last_ns}, [])

    def _counts(self, faults: list[tuple[str, int, int]], duplicates: Counter,
                coverage: float) -> dict[str, Any]:
        """Return the summary counts."""
        produced = Counter(p.outcome for p in self.produces.values())
        acks = self.ack_counts
        return {
            "mode": self.config.mode,
            "seed": self.config.seed,
            "produced_ok": produced["ok"],
            "produced_refused": produced["refused"],
            "produced_ambiguous": produced["ambiguous"],
            "delivered": self.delivered_count,
            "distinct_delivered": len(self.deliveries),
            "delivered_unproduced": sum(1 for i in self.deliveries if i not in self.produces),
            "acks_ok": acks["ack", "ok"],
            "acks_refused": acks["ack", "refused"],
            "acks_ambiguous": acks["ack", "ambiguous"],
            "nacks_ok": acks["nack", "ok"],
            "faults": len(faults),
            "faults_by_kind": dict(Counter(kind for kind, _, _ in faults)),
            "lost": len(self.failures.get("lost", ())),
            "stranded": self.stranded,
            "diverged_offsets": self.diverged,
            "corrupted": len(self.failures.get("corrupted", ())),
            "duplicates_explained": duplicates["explained"],
            "duplicates_unexplained": duplicates["unexplained"],
            "fault_coverage": round(coverage, 6),
        }

    def _unknown_reasons(self, counts: dict[str, Any], faults: list[tuple[str, int, int]],
                         coverage: float) -> list[str]:
        """Return why a run without failures still proves too little to PASS."""
        cfg = self.config
        reasons = []
        if counts["produced_ok"] < cfg.min_produced:
            reasons.append(f"only {counts['produced_ok']} produces accepted, "
                           f"min_produced is {cfg.min_produced}")
        if cfg.mode == "faults" and coverage > MAX_FAULT_COVERAGE:
            reasons.append(f"fault windows cover {coverage:.1%} of the run, "
                           f"more than {MAX_FAULT_COVERAGE:.0%}")
        if counts["delivered_unproduced"]:
            reasons.append(f"{counts['delivered_unproduced']} delivered id(s) have no produce "
                           "record: history incomplete")
        crashes = sum(1 for kind, _, _ in faults if kind in CRASH_KINDS)
        if cfg.mode == "strict" and crashes:
            reasons.append(f"strict run contains {crashes} crash-class fault(s)")
        return reasons


def _judge(numbered_records: Iterable[tuple[int, Any]]) -> Result:
    """Feed (line number, record) pairs to a Checker and return its verdict."""
    # Millions of long-lived objects and no reference cycles: the cyclic collector would
    # only rescan them over and over, which doubles the running time on big histories.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        checker = Checker()
        for line_no, record in numbered_records:
            checker.add(record, line_no)
        return checker.finish()
    finally:
        if was_enabled:
            gc.enable()


def check(records: Iterable[dict]) -> Result:
    """Judge a history given as records in file order (the first must be meta start)."""
    return _judge(enumerate(records, start=1))


def read_history(path: str) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed record) for each non-blank line of a JSON Lines file."""
    decode = json.JSONDecoder().decode
    with open(path, encoding="utf-8") as stream:
        for line_no, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                yield line_no, decode(line)
            except json.JSONDecodeError as error:
                raise HistoryError(line_no, f"bad JSON: {error.msg}") from None


def check_file(path: str) -> Result:
    """Judge the history stored in a JSON Lines file."""
    return _judge(read_history(path))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description="Judge a Narad chaos-test history.")
    parser.add_argument("history", help="JSON Lines history file")
    parser.add_argument("--json", metavar="OUT", help="also write the result as JSON to OUT")
    parser.add_argument("--max-report", metavar="N", type=int, default=DEFAULT_MAX_REPORT,
                        help="failures to show per rule (default %(default)s)")
    args = parser.parse_args(argv)
    if args.max_report < 0:
        parser.error("--max-report must not be negative")
    try:
        result = check_file(args.history)
    except (OSError, UnicodeDecodeError, HistoryError) as error:
        print(f"check_history: unreadable history {args.history}: {error}", file=sys.stderr)
        return EXIT_UNREADABLE
    print(result.to_text(args.max_report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result.to_json(args.max_report), out, indent=2)
            out.write("\n")
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main())
