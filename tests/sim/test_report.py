"""The report (htcpool.sim.report): plots and the HTML page made from a run's output files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from htcpool.sim.report import ReportError, write_report
from tests.sim.fake_run import write_run

PNG = b"\x89PNG\r\n\x1a\n"


def test_report_writes_every_plot_and_a_page_that_shows_them(tmp_path: Path) -> None:
    write_run(tmp_path)
    write_report(tmp_path)
    for name in ("share_users.png", "share_groups.png", "priority_users.png", "queue.png",
                 "utilization.png"):
        data = (tmp_path / name).read_bytes()
        assert data.startswith(PNG) and len(data) > 5000, name
    page = (tmp_path / "report.html").read_text()
    images = re.findall(r'<img src="([^"]+)"', page)
    assert images == ["share_users.png", "share_groups.png", "priority_users.png", "queue.png",
                      "utilization.png"]
    # the summary's numbers and per-user rows, biggest user first
    assert "<th>jobs completed</th><td>80</td>" in page
    assert "<th>utilization</th><td>80.0%</td>" in page
    assert page.index("alice@sim") < page.index("bob@sim")
    assert "<td>75.0%</td>" in page and "<td>25.0%</td>" in page
    assert "group_physics" in page


def test_a_run_without_groups_has_no_group_plot_and_says_so(tmp_path: Path) -> None:
    write_run(tmp_path)
    usage = (tmp_path / "usage.csv").read_text().splitlines()
    (tmp_path / "usage.csv").write_text("\n".join(line for line in usage if ",group," not in line) + "\n")
    write_report(tmp_path)
    assert not (tmp_path / "share_groups.png").exists()
    assert "No accounting groups in this run" in (tmp_path / "report.html").read_text()


def test_many_users_are_summed_beyond_the_biggest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from htcpool.sim import report

    users = {f"u{i:02d}@sim": (i + 1, 1.0) for i in range(12)}
    write_run(tmp_path, users=users, makespan=600, step=60)
    drawn: list[list[str]] = []
    original = report._plot_share

    def spy(series, title, scale, unit, path):  # type: ignore[no-untyped-def]
        drawn.append(report._biggest(series))
        original(series, title, scale, unit, path)

    monkeypatch.setattr(report, "_plot_share", spy)
    write_report(tmp_path)
    assert drawn[0] == [f"u{i:02d}@sim" for i in range(11, 3, -1)]  # the eight biggest, biggest first


def test_running_share_ends_at_each_names_fraction_of_cpu_time() -> None:
    from htcpool.sim.report import _running_share

    times = [0.0, 10.0, 20.0, 30.0]
    alice, bob = [3.0, 3.0, 0.0, 0.0], [1.0, 1.0, 2.0, 0.0]
    totals = [a + b for a, b in zip(alice, bob, strict=True)]
    assert _running_share(times, alice, totals)[1:] == [0.75, 0.75, 60 / 100]
    assert _running_share(times, bob, totals)[-1] == pytest.approx(40 / 100)


@pytest.mark.parametrize(("file", "damage", "message"), [
    ("summary.json", lambda text: text[:-3], r"summary\.json:\d+: not JSON"),
    ("timeseries.csv", lambda text: text.replace("time_s,", "when,", 1), r"timeseries\.csv:1: the header lacks the column\(s\) time_s"),
    ("usage.csv", lambda text: text.replace("\n60.0,user,alice@sim,6,6,", "\n60.0,user,alice@sim,6,six,", 1), r"usage\.csv:5: cpus_in_use is 'six'"),
])
def test_a_damaged_output_file_is_named_with_its_line(tmp_path: Path, file: str, damage, message: str) -> None:  # type: ignore[no-untyped-def]
    write_run(tmp_path)
    path = tmp_path / file
    path.write_text(damage(path.read_text()))
    with pytest.raises(ReportError, match=message):
        write_report(tmp_path)


def test_a_directory_without_a_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match=r"summary\.json: missing"):
        write_report(tmp_path)
