"""debate.md's facts in each protocol's own words: a committee says how many rounds it held of
how many it might have; Wind/Wall/Door says the lineup's judge took no part, in debate.md and
above its synthesis."""

from __future__ import annotations

from support import invoke, one_path, sim, write_config


def facts(md: str) -> dict[str, str]:
    head = md.split("## Quaestio", 1)[0]
    return {k: v for k, v in (line[4:].split(":** ", 1) for line in head.splitlines()
                              if line.startswith("- **") and ":** " in line)}


def test_a_committee_says_the_rounds_it_held(home, tmp_path):
    cfg = write_config(tmp_path / "c.yaml", [sim("ada"), sim("bob")], judge=False)
    ran = invoke("run", "--protocol", "committee", "--config", str(cfg), "-q", "Tabs?",
                 cwd=home)
    assert ran.returncode == 0, ran.stderr
    md = (one_path(ran.stdout).parent / "debate.md").read_text()
    held = md.count("## Round ") and max(int(line.split()[2].rstrip(",")) for line in
                                         md.splitlines() if line.startswith("## Round "))
    assert facts(md)["Rounds"] == f"{held} held (at most 8)"
    assert facts(md)["Judge"] == "none (the debate ran without a judge)"


def test_wind_wall_door_says_its_judge_takes_no_part(home, tmp_path):
    cfg = write_config(tmp_path / "w.yaml", [sim("ada"), sim("bob"), sim("cyd")])
    ran = invoke("run", "--protocol", "wind-wall-door", "--config", str(cfg), "-q", "Tabs?",
                 cwd=home)
    assert ran.returncode == 0, ran.stderr
    folder = one_path(ran.stdout).parent
    md = (folder / "debate.md").read_text()
    assert facts(md)["Judge"] == "none (the lineup's judge takes no part in this protocol)"
    assert facts(md)["Rounds"] == "at most 4"
    synthesis = (folder / "synthesis.md").read_text()
    header = synthesis.split("\n\n", 1)[0]
    assert "Wind " in header and "Door " in header and "judge" not in header
