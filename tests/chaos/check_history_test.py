#!/usr/bin/env python3
"""Self-test for check_history.py: hand-made histories, one or more per rule, plus the CLI.

Run with either of
  python3 -m unittest discover -s tests/chaos -p 'check_history_test.py'
  python3 tests/chaos/check_history_test.py
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import check_history  # noqa: E402  (needs the path set just above)
from check_history import HistoryError, check  # noqa: E402

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_history.py")
MS = 1_000_000
VISIBILITY_MS = 1_000
GRACE_MS = 100
RUN_END_MS = 100_000


class History:
    """Builds a history record by record; times are given in milliseconds."""

    def __init__(self, mode: str = "faults", min_produced: int = 1) -> None:
        self.records: list[dict] = [{
            "op": "meta", "event": "start", "client": "driver", "call_ns": 0, "return_ns": 0,
            "seed": 7, "mode": mode, "visibility_ms": VISIBILITY_MS,
            "fault_grace_ms": GRACE_MS, "min_produced": min_produced,
        }]
        self.handles = 0

    def produce(self, msg_id, at_ms: float, outcome: str = "ok", topic: str = "t") -> None:
        """Add a produce attempt taking 1 ms."""
        status = {"ok": 202, "refused": 503, "ambiguous": None}[outcome]
        self.records.append({
            "op": "produce", "client": "p1", "id": msg_id, "topic": topic, "node": 1,
            "status": status, "outcome": outcome,
            "call_ns": int(at_ms * MS), "return_ns": int((at_ms + 1) * MS)})

    def deliver(self, msg_id, at_ms: float, client: str = "c1", partition: int = 0,
                offset: int | None = None, checksum_ok: bool = True, topic: str = "t") -> str:
        """Add a delivery from a consume request taking 1 ms; return its handle."""
        offset = msg_id if offset is None else offset
        self.handles += 1
        handle = f"{partition}:{offset}:{self.handles}"
        self.records.append({
            "op": "deliver", "client": client, "id": msg_id, "topic": topic,
            "partition": partition, "offset": offset, "handle": handle,
            "checksum_ok": checksum_ok, "node": 1,
            "call_ns": int(at_ms * MS), "return_ns": int((at_ms + 1) * MS)})
        return handle

    def ack(self, handle: str, msg_id, at_ms: float, outcome: str = "ok", kind: str = "ack",
            client: str = "c1") -> None:
        """Add an ack or nack taking 1 ms."""
        status = {"ok": 204, "refused": 410, "ambiguous": None}[outcome]
        self.records.append({
            "op": "ack", "client": client, "kind": kind, "handle": handle, "id": msg_id,
            "status": status, "outcome": outcome,
            "call_ns": int(at_ms * MS), "return_ns": int((at_ms + 1) * MS)})

    def consume(self, msg_id, at_ms: float, client: str = "c1", **kwargs) -> str:
        """Deliver a message and ack it successfully 2 ms later; return the handle."""
        handle = self.deliver(msg_id, at_ms, client=client, **kwargs)
        self.ack(handle, msg_id, at_ms + 2, client=client)
        return handle

    def fault(self, kind: str, start_ms: float, end_ms: float, node: int = 2) -> None:
        """Add a fault active over [start_ms, end_ms]."""
        start, end = int(start_ms * MS), int(end_ms * MS)
        self.records.append({
            "op": "fault", "client": "nemesis", "kind": kind, "node": node,
            "start_ns": start, "end_ns": end, "call_ns": start, "return_ns": end,
            "detail": f"{kind} node {node}"})

    def quarantined(self, records: list[list], at_ms: float = RUN_END_MS - 1,
                    topic: str = "t", partition: int = 0) -> None:
        """Add what a set-aside copy of (topic, partition) holds: [offset, id] pairs."""
        at = int(at_ms * MS)
        self.records.append({"op": "meta", "event": "quarantined", "client": "driver",
                             "node": 2, "kind": "partition", "topic": topic,
                             "partition": partition, "records": records,
                             "call_ns": at, "return_ns": at})

    def finish(self, at_ms: float = RUN_END_MS, drained: bool = True,
               healed_ms: float | None = None) -> None:
        """Add the healed marker (by default at the end) and the end record."""
        healed = int((at_ms if healed_ms is None else healed_ms) * MS)
        self.records.append({"op": "meta", "event": "healed", "client": "driver",
                             "call_ns": healed, "return_ns": healed})
        at = int(at_ms * MS)
        self.records.append({"op": "meta", "event": "end", "client": "driver",
                             "drained": drained, "call_ns": at, "return_ns": at})

    def check(self) -> check_history.Result:
        """Judge the history built so far."""
        return check(self.records)


def clean_history(count: int = 5, mode: str = "faults", min_produced: int = 1) -> History:
    """Return a history of count messages, each produced, delivered once and acked."""
    history = History(mode=mode, min_produced=min_produced)
    for msg_id in range(1, count + 1):
        history.produce(msg_id, msg_id * 10)
        history.consume(msg_id, msg_id * 10 + 3)
    return history


class CheckerTestCase(unittest.TestCase):
    """Assertions on verdicts and rule codes."""

    def assertVerdict(self, result, verdict: str, rules: set[str] = frozenset()) -> None:
        """Check the verdict and that exactly the given rules failed."""
        message = result.to_text()
        self.assertEqual(result.verdict, verdict, message)
        self.assertEqual(set(result.failures), set(rules), message)


class CleanAndUnknownTest(CheckerTestCase):
    """Valid histories and the UNKNOWN verdict."""

    def test_clean_history_passes(self):
        history = clean_history()
        history.finish()
        result = history.check()
        self.assertVerdict(result, "PASS")
        self.assertEqual(result.counts["produced_ok"], 5)
        self.assertEqual(result.counts["distinct_delivered"], 5)
        self.assertEqual(result.counts["acks_ok"], 5)
        self.assertEqual(result.exit_code, 0)

    def test_ambiguous_produce_may_or_may_not_be_delivered(self):
        history = clean_history()
        history.produce(100, 200, outcome="ambiguous")
        history.produce(101, 210, outcome="ambiguous")
        history.consume(101, 220)
        history.finish()
        self.assertVerdict(history.check(), "PASS")

    def test_too_few_produces_is_unknown(self):
        history = clean_history(count=3, min_produced=4)
        history.finish()
        result = history.check()
        self.assertVerdict(result, "UNKNOWN")
        self.assertIn("min_produced", result.unknown_reasons[0])
        self.assertEqual(result.exit_code, 2)

    def test_faults_covering_most_of_the_run_is_unknown(self):
        history = clean_history()
        history.fault("pause", 1_000, 95_000)
        history.finish()
        result = history.check()
        self.assertVerdict(result, "UNKNOWN")
        self.assertGreater(result.counts["fault_coverage"], 0.9)

    def test_coverage_is_measured_up_to_healed(self):
        healed_early = clean_history()
        healed_early.fault("pause", 1_000, 50_000)
        healed_early.finish(healed_ms=52_000)
        self.assertVerdict(healed_early.check(), "UNKNOWN")
        healed_late = clean_history()
        healed_late.fault("pause", 1_000, 50_000)
        healed_late.finish()
        self.assertVerdict(healed_late.check(), "PASS")

    def test_coverage_does_not_matter_in_strict_mode(self):
        history = clean_history(mode="strict")
        history.fault("move", 1_000, 95_000)
        history.finish()
        self.assertVerdict(history.check(), "PASS")

    def test_fail_beats_unknown(self):
        history = clean_history(count=3, min_produced=10)
        history.produce(50, 100)
        history.fault("pause", 1_000, 99_000)
        history.finish()
        result = history.check()
        self.assertVerdict(result, "FAIL", {"lost"})
        self.assertEqual(len(result.unknown_reasons), 2)

    def test_delivery_of_unproduced_id_is_unknown(self):
        history = clean_history()
        history.consume(999, 300)
        history.finish()
        result = history.check()
        self.assertVerdict(result, "UNKNOWN")
        self.assertEqual(result.counts["delivered_unproduced"], 1)

    def test_crash_in_strict_run_is_unknown(self):
        history = clean_history(mode="strict")
        history.fault("kill", 500, 600)
        history.finish()
        self.assertVerdict(history.check(), "UNKNOWN")


class LossAndCorruptionTest(CheckerTestCase):
    """Rules lost, corrupted, offset_conflict, refused_delivered and overdue."""

    def test_lost(self):
        history = clean_history()
        history.produce(6, 100)
        history.finish()
        result = history.check()
        self.assertVerdict(result, "FAIL", {"lost"})
        self.assertEqual(result.failures["lost"][0].ids, [6])
        self.assertEqual(result.counts["lost"], 1)

    def test_corrupted_checksum(self):
        history = clean_history()
        history.deliver(3, 200, checksum_ok=False, client="c2")
        history.finish()
        result = history.check()
        self.assertVerdict(result, "FAIL", {"corrupted"})
        self.assertEqual(result.failures["corrupted"][0].ids, [3])

    def test_corrupted_unparseable_payload(self):
        history = clean_history()
        history.deliver(None, 200, offset=77)
        history.finish()
        result = history.check()
        self.assertVerdict(result, "FAIL", {"corrupted"})
        self.assertEqual(result.counts["corrupted"], 1)

    def test_only_corrupted_copies_count_as_lost(self):
        history = clean_history()
        history.produce(6, 100)
        history.deliver(6, 110, checksum_ok=False)
        history.finish()
        self.assertVerdict(history.check(), "FAIL", {"corrupted", "lost"})

    def test_offset_conflict(self):
        history = clean_history()
        history.produce(6, 100)
        history.consume(6, 110, offset=2)
        history.finish()
        result = history.check()
        self.assertVerdict(result, "FAIL", {"offset_conflict"})
        self.assertEqual(result.failures["offset_conflict"][0].ids, [2, 6])

    def test_offset_conflict_is_not_excused_by_faults(self):
        history = clean_history()
        history.fault("kill", 90, 120)
        history.produce(6, 100)
        history.consume(6, 110, offset=2)
        history.finish()
        self.assertVerdict(history.check(), "FAIL", {"offset_conflict"})

    def test_lost_message_kept_in_a_set_aside_copy_is_stranded_not_lost(self):
        for mode, verdict in (("faults", "PASS"), ("strict", "FAIL")):
            history = clean_history(mode=mode)
            history.produce(6, 100)
            history.quarantined([[5, 6]])
            history.finish()
            result = history.check()
            self.assertVerdict(result, verdict, set() if verdict == "PASS" else {"lost"})
            self.assertEqual(result.counts["stranded"], 1 if mode == "faults" else 0)

    def test_offset_conflict_with_one_id_set_aside_there_is_divergence(self):
        for mode, verdict in (("faults", "PASS"), ("strict", "FAIL")):
            history = clean_history(mode=mode)
            history.produce(6, 100)
            history.consume(6, 110, offset=2)
            history.quarantined([[2, 2]])
            history.finish()
            result = history.check()
            self.assertVerdict(result, verdict,
                               set() if verdict == "PASS" else {"offset_conflict"})
            self.assertEqual(result.counts["diverged_offsets"], 1 if mode == "faults" else 0)

    def test_offset_conflict_with_the_set_aside_id_elsewhere_fails(self):
        history = clean_history()
        history.produce(6, 100)
        history.consume(6, 110, offset=2)
        history.quarantined([[3, 2]])  # the copy holds id 2, but not at offset 2
        history.finish()
        self.assertVerdict(history.check(), "FAIL", {"offset_conflict"})

    def test_refused_delivered(self):
        history = clean_history()
        history.produce(6, 100, outcome="refused")
        history.consume(6, 110)
        history.finish()
        self.assertVerdict(history.check(), "FAIL", {"refused_delivered"})

    def test_refused_not_delivered_passes(self):
        history = clean_history()
        history.produce(6, 100, outcome="refused")
        history.finish()
        self.assertVerdict(history.check(), "PASS")

    def test_overdue_when_not_drained(self):
        history = clean_history()
        history.finish(drained=False)
        self.assertVerdict(history.check(), "FAIL", {"overdue"})

    def test_overdue_when_end_missing(self):
        history = clean_history()
        self.assertVerdict(history.check(), "FAIL", {"overdue"})


class TwoPartitionsTest(CheckerTestCase):
    """Rule two_partitions and its fault exemption."""

    @staticmethod
    def history(mode: str = "faults", fault: str | None = None) -> History:
        """Message 6 is delivered from partition 0, its lease expires, then from partition 1."""
        history = clean_history(mode=mode)
        history.produce(6, 100)
        if fault:
            history.fault(fault, 500, 600)
        history.deliver(6, 110, partition=0)
        history.consume(6, 3_000, partition=1, offset=0)
        history.finish()
        return history

    def test_two_partitions(self):
        result = self.history().check()
        self.assertVerdict(result, "FAIL", {"two_partitions"})
        self.assertEqual(result.failures["two_partitions"][0].ids, [6])

    def test_two_partitions_excused_by_fault(self):
        self.assertVerdict(self.history(fault="move").check(), "PASS")

    def test_two_partitions_not_excused_in_strict_mode(self):
        self.assertVerdict(self.history(mode="strict", fault="move").check(), "FAIL",
                           {"two_partitions"})


class AckedRedeliveryTest(CheckerTestCase):
    """Rules acked_redelivered and frontier_backwards."""

    @staticmethod
    def history(mode: str = "faults", fault: tuple | None = None,
                ack_outcome: str = "ok") -> History:
        """Message 6 is delivered and acked (ack returns at 114 ms), then delivered again."""
        history = clean_history(mode=mode)
        history.produce(6, 100)
        handle = history.deliver(6, 110)
        history.ack(handle, 6, 113, outcome=ack_outcome)
        if fault:
            history.fault(*fault)
        history.consume(6, 5_000)
        history.finish()
        return history

    def test_acked_redelivered(self):
        # Without any fault the redelivery also breaks frontier_backwards.
        result = self.history().check()
        self.assertVerdict(result, "FAIL", {"acked_redelivered", "frontier_backwards"})
        self.assertEqual(result.failures["acked_redelivered"][0].ids, [6])

    def test_acked_redelivered_excused_by_crash(self):
        self.assertVerdict(self.history(fault=("kill", 2_000, 2_500)).check(), "PASS")

    def test_window_reaches_visibility_before_the_ack(self):
        # The pause (plus grace) ended 800 ms before the ack returned: within visibility_ms.
        for pause_ms, rules in ((2_000, {"frontier_backwards"}),
                                (1_000, {"frontier_backwards", "acked_redelivered"})):
            history = clean_history()
            history.produce(6, 100)
            handle = history.deliver(6, 1_900)
            history.fault("pause", pause_ms, pause_ms + 100)
            history.ack(handle, 6, 3_000)
            history.consume(6, 5_000)
            history.finish()
            with self.subTest(pause_ms=pause_ms):
                self.assertVerdict(history.check(), "FAIL", rules)

    def test_fault_long_before_the_ack_does_not_excuse(self):
        history = clean_history()
        history.fault("kill", 20, 21)
        history.produce(6, 4_000)
        handle = history.deliver(6, 4_010)
        history.ack(handle, 6, 4_013)
        history.consume(6, 9_000)
        history.finish()
        self.assertVerdict(history.check(), "FAIL", {"acked_redelivered", "frontier_backwards"})

    def test_latest_ack_is_the_one_judged(self):
        # A crash explains the second delivery, but the third follows a later confirmed ack.
        history = clean_history()
        history.produce(6, 100)
        history.consume(6, 110)
        history.fault("crash", 2_000, 2_100)
        history.consume(6, 5_000)
        history.consume(6, 9_000)
        history.finish()
        result = history.check()
        self.assertVerdict(result, "FAIL", {"acked_redelivered", "frontier_backwards"})
        self.assertEqual(len(result.failures["acked_redelivered"]), 1)

    def test_redelivery_after_refused_ack_passes(self):
        self.assertVerdict(self.history(ack_outcome="refused").check(), "PASS")

    def test_redelivery_after_ambiguous_ack_passes(self):
        self.assertVerdict(self.history(ack_outcome="ambiguous").check(), "PASS")

    def test_strict_mode_never_excuses_acked_redelivery(self):
        faults_mode = self.history(fault=("kill", 2_000, 2_500)).check()
        self.assertVerdict(faults_mode, "PASS")
        strict = self.history(mode="strict", fault=("kill", 2_000, 2_500)).check()
        self.assertVerdict(strict, "FAIL", {"acked_redelivered"})
        self.assertNotIn("strict_duplicate", strict.failures)

    def test_frontier_backwards(self):
        # A pause excuses acked_redelivered but an acked message may only return after a crash.
        result = self.history(fault=("pause", 2_000, 2_500)).check()
        self.assertVerdict(result, "FAIL", {"frontier_backwards"})
        self.assertEqual(result.failures["frontier_backwards"][0].ids, [6])

    def test_frontier_needs_crash_after_the_ack_call(self):
        # The kill ended before the ack: its grace excuses rule 6 but not rule 8.
        result = self.history(fault=("kill", 105, 106)).check()
        self.assertVerdict(result, "FAIL", {"frontier_backwards"})

    def test_frontier_excused_by_crash_active_at_the_ack(self):
        self.assertVerdict(self.history(fault=("lose_unsynced", 105, 120)).check(), "PASS")


class LeaseOverlapTest(CheckerTestCase):
    """Rule lease_overlap and its exemptions."""

    @staticmethod
    def history(mode: str = "faults", fault: str | None = None, release: str | None = None,
                second_at_ms: float = 500, second_client: str = "c2") -> History:
        """Message 6 is leased to c1 at 110 ms (never acked) and to another client later."""
        history = clean_history(mode=mode)
        history.produce(6, 100)
        handle = history.deliver(6, 110, client="c1")
        if release:
            kind, outcome = release.split("-")
            history.ack(handle, 6, 200, kind=kind, outcome=outcome)
        if fault:
            history.fault(fault, 300, 400)
        history.consume(6, second_at_ms, client=second_client)
        history.finish()
        return history

    def test_lease_overlap(self):
        result = self.history().check()
        self.assertVerdict(result, "FAIL", {"lease_overlap"})
        self.assertEqual(result.failures["lease_overlap"][0].ids, [6])

    def test_same_client_is_no_overlap(self):
        self.assertVerdict(self.history(second_client="c1").check(), "PASS")

    def test_expired_lease_is_no_overlap(self):
        self.assertVerdict(self.history(second_at_ms=1_200).check(), "PASS")

    def test_confirmed_nack_ends_the_lease(self):
        self.assertVerdict(self.history(release="nack-ok").check(), "PASS")

    def test_unconfirmed_nack_does_not_end_the_lease(self):
        self.assertVerdict(self.history(release="nack-ambiguous").check(), "FAIL",
                           {"lease_overlap"})

    def test_refused_ack_does_not_end_the_lease(self):
        self.assertVerdict(self.history(release="ack-refused").check(), "FAIL",
                           {"lease_overlap"})

    def test_lease_overlap_excused_by_fault(self):
        self.assertVerdict(self.history(fault="pause").check(), "PASS")

    def test_strict_mode_excuses_only_cluster_operations(self):
        self.assertVerdict(self.history(mode="strict", fault="move").check(), "PASS")
        self.assertVerdict(self.history(mode="strict", fault="pause").check(), "FAIL",
                           {"lease_overlap"})


class DuplicateTest(CheckerTestCase):
    """Duplicate classification and rule strict_duplicate."""

    @staticmethod
    def history(mode: str = "faults", fault: str | None = None) -> History:
        """Message 6 is acked, but redelivered to the same client before the ack returned."""
        history = clean_history(mode=mode)
        if fault:
            history.fault(fault, 50, 60)
        history.produce(6, 100)
        handle = history.deliver(6, 110)
        history.ack(handle, 6, 130)
        history.consume(6, 120)
        history.finish()
        return history

    def test_unexplained_duplicate_is_counted_in_faults_mode(self):
        result = self.history().check()
        self.assertVerdict(result, "PASS")
        self.assertEqual(result.counts["duplicates_unexplained"], 1)
        self.assertEqual(result.counts["duplicates_explained"], 0)

    def test_strict_mode_flags_unexplained_duplicate(self):
        result = self.history(mode="strict").check()
        self.assertVerdict(result, "FAIL", {"strict_duplicate"})
        self.assertEqual(result.failures["strict_duplicate"][0].ids, [6])

    def test_duplicate_explanations(self):
        history = clean_history(mode="strict")
        history.produce(6, 100)
        history.deliver(6, 110)
        nacked = history.deliver(6, 1_200)
        history.ack(nacked, 6, 1_203, kind="nack")
        refused = history.deliver(6, 1_300)
        history.ack(refused, 6, 1_303, outcome="refused")
        history.consume(6, 1_400)
        history.finish()
        result = history.check()
        self.assertVerdict(result, "PASS")
        self.assertEqual(result.counts["duplicates_explained"], 3)

    def test_duplicate_after_lease_expiry_is_explained(self):
        history = clean_history(mode="strict")
        history.produce(6, 100)
        handle = history.deliver(6, 110)
        history.ack(handle, 6, 3_000)
        history.consume(6, 1_200)
        history.finish()
        result = history.check()
        self.assertVerdict(result, "PASS")
        self.assertEqual(result.counts["duplicates_explained"], 1)

    def test_no_fault_window_explains_a_duplicate_in_strict_mode(self):
        # The join ended 50 ms before the first delivery, within its 100 ms grace: that would
        # excuse the duplicate in faults mode, never in strict mode.
        self.assertVerdict(self.history(mode="faults", fault="join").check(), "PASS")
        self.assertVerdict(self.history(mode="strict", fault="join").check(), "FAIL",
                           {"strict_duplicate"})


class MalformedHistoryTest(unittest.TestCase):
    """Histories the checker refuses to judge."""

    def test_missing_start_record(self):
        with self.assertRaises(HistoryError):
            check([{"op": "produce", "id": 1, "outcome": "ok", "call_ns": 0, "return_ns": 1}])

    def test_empty_history(self):
        with self.assertRaises(HistoryError):
            check([])

    def test_reused_produce_id(self):
        history = clean_history()
        history.produce(1, 500)
        with self.assertRaises(HistoryError) as caught:
            history.check()
        self.assertEqual(caught.exception.line_no, len(history.records))

    def test_missing_field(self):
        history = clean_history()
        history.records.append({"op": "deliver", "id": 1, "call_ns": 0, "return_ns": 1})
        with self.assertRaises(HistoryError):
            history.check()

    def test_return_before_call(self):
        history = clean_history()
        history.records[1]["return_ns"] = -1
        with self.assertRaises(HistoryError) as caught:
            history.check()
        self.assertEqual(caught.exception.line_no, 2)


class CommandLineTest(unittest.TestCase):
    """The script's output and exit codes."""

    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.addCleanup(self.directory.cleanup)

    def run_script(self, lines: list[str], *args: str) -> subprocess.CompletedProcess:
        """Write lines to a history file and run the checker on it."""
        path = os.path.join(self.directory.name, "history.jsonl")
        with open(path, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
        return subprocess.run([sys.executable, SCRIPT, path, *args],
                              capture_output=True, text=True, check=False)

    @staticmethod
    def lines_of(history: History) -> list[str]:
        """Serialise a history as JSON Lines."""
        return [json.dumps(record) for record in history.records]

    def test_pass_exit_code_and_summary(self):
        history = clean_history()
        history.finish()
        run = self.run_script(self.lines_of(history))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.splitlines()[0], "verdict: PASS")
        self.assertIn("produced: ok=5 refused=0 ambiguous=0", run.stdout)

    def test_fail_exit_code_json_and_max_report(self):
        history = clean_history()
        for msg_id in range(6, 10):
            history.produce(msg_id, msg_id * 10)
        history.finish()
        json_path = os.path.join(self.directory.name, "result.json")
        run = self.run_script(self.lines_of(history), "--json", json_path, "--max-report", "2")
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertEqual(run.stdout.splitlines()[0], "verdict: FAIL")
        self.assertEqual(sum(line.startswith("  lost:") for line in run.stdout.splitlines()), 2)
        self.assertIn("... 2 more", run.stdout)
        with open(json_path, encoding="utf-8") as stream:
            result = json.load(stream)
        self.assertEqual(result["verdict"], "FAIL")
        self.assertEqual(result["counts"]["lost"], 4)
        self.assertEqual(result["failure_totals"], {"lost": 4})
        self.assertEqual(len(result["failures"]["lost"]), 2)
        self.assertEqual(result["failures"]["lost"][0]["ids"], [6])
        self.assertEqual(result["unknown_reasons"], [])

    def test_unknown_exit_code(self):
        history = clean_history(min_produced=100)
        history.finish()
        run = self.run_script(self.lines_of(history))
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertEqual(run.stdout.splitlines()[0], "verdict: UNKNOWN")

    def test_malformed_line_exit_code_names_the_line(self):
        history = clean_history()
        history.finish()
        lines = self.lines_of(history)
        lines.insert(3, '{"op": "produce", "id": ')
        run = self.run_script(lines)
        self.assertEqual(run.returncode, 3)
        self.assertIn("line 4", run.stderr)

    def test_missing_file_exit_code(self):
        run = subprocess.run([sys.executable, SCRIPT, os.path.join(self.directory.name, "no")],
                             capture_output=True, text=True, check=False)
        self.assertEqual(run.returncode, 3)


if __name__ == "__main__":
    unittest.main()
