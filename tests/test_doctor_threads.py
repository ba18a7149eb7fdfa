"""``doctor`` is a use case like the debate's: a host (a server, a test) may call it from any
thread and stop it through a cancel token, which ends its canaries and nothing else the host
runs; the CLI's signal handlers are the CLI's only."""

from __future__ import annotations

import threading
import uuid

from disputatio import config, doctor
from disputatio.adapters import fence as fencing
from disputatio.adapters import transport
from disputatio.adapters.base import Invocation
from disputatio.cancel import CancelToken
from support import MARKER_VAR, gone, kill_survivors, marked_processes, sim, wait_for


def _on_a_thread(fn):
    got: dict = {}

    def run():
        try:
            got["value"] = fn()
        except BaseException as exc:   # what the host would see
            got["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    return t, got


def test_doctor_runs_on_a_thread_that_is_not_the_main_one(home):
    cfg = config.DebateConfig.model_validate({"participants": [sim("a"), sim("b")]})
    t, got = _on_a_thread(lambda: doctor.doctor(cfg, 1, fencing.OFF))
    t.join(60)
    assert "error" not in got, got.get("error")
    checkup = got["value"]
    assert checkup.outcome.status == "healthy"
    assert [h.participant.name for h in checkup.healths] == ["a", "b"]


def test_a_cancel_from_the_host_ends_every_canary_at_once_and_only_them(home, tmp_path):
    marker = uuid.uuid4().hex
    stuck = sim("stuck", DISPUTATIO_SIM_HANG=1, **{MARKER_VAR: marker})
    cfg = config.DebateConfig.model_validate({"participants": [sim("a"), stuck]})
    cancel = CancelToken()
    try:
        t, got = _on_a_thread(lambda: doctor.doctor(cfg, 1, fencing.OFF, cancel=cancel))
        wait_for(lambda: marked_processes(marker), 30, "the stuck canary running")
        cancel.cancel()
        t.join(15)
        assert not t.is_alive(), "the doctor waited for its canary's timeout"
        assert "error" not in got, got.get("error")
        checkup = got["value"]
        assert checkup.outcome.status == "interrupted"
        assert "stuck" not in [h.participant.name for h in checkup.healths]
        assert gone(marker)
        # the host's other work is not cancelled with the doctor: a process run afterwards
        # on the process's own token still runs
        cap = transport.run(Invocation(argv=("true",)), tmp_path, 10, tmp_path / "raw", "t")
        assert (cap.interrupted, cap.exit_code) == (False, 0)
    finally:
        kill_survivors(marker)
