"""Bash commands and how claude's permission rules must treat them: the unit tests check the
adapter's rules against these, and the real tier checks the real binary against the same."""

# argument forms of approved commands that write outside the checkout or run another program
ESCAPES = [
    "git grep --open-files-in-pager='touch /tmp/x' a", "git grep -O'touch /tmp/x' a",
    "git grep --open=touch a", "git grep -nOtouch a",
    "git diff --output=/tmp/x", "git log -1 --output /tmp/x", "git blame --output=x a.py",
    "git diff --ext-diff", "git diff --out''put=/tmp/x", 'git diff --out"p"ut=x',
    "git diff --out\\put=x", "git log --out{put,}=x",
    "pytest -q --junitxml=/tmp/j.xml", "python3 -m pytest --junit-xml j.xml",
    "python -m pytest --junit-xml=j.xml", "pytest --basetemp=b", "pytest --debug=d.log",
    "pytest --log-file=l", "pytest --report-log=r", "pytest -o cache_dir=c",
    "pytest --override-ini=cache_dir=c", "pytest --rootdir=r", "pytest -c other.ini",
    "pytest --jun''itxml=j.xml", "pytest --jun\\itxml=j.xml", "pytest --jun{itxml,}=j",
    "pytest ~/x", "pytest $HOME", "pytest ../x", "pytest ..", "pytest a/../../x",
    "pytest /tmp/x", "pytest -k `id`",
    "npm test --script-shell=touch", "npm test --prefix=/x", "npm test -- /tmp/x",
    "go test -o /tmp/t ./...", "go test -exec touch ./...", "go test -toolexec x ./...",
    "go test -coverprofile=c ./...", "go test -cpuprofile c ./...", "go test -trace t",
    "cargo test --config target.x.runner=touch", "cargo test --target-dir t",
    "cargo test -Z unstable-options", "cargo test --manifest-path ../Cargo.toml",
    "PYTEST_ADDOPTS=--junitxml=/tmp/j pytest", "pytest; touch /tmp/x",
    # pagers and config overrides, which run any command: not approved at all
    "git -c core.pager=touch log", "git --paginate log", "GIT_PAGER=touch git log",
    "git -c diff.external=touch diff",
]
READS = [
    "git diff HEAD", "git diff HEAD~1", "git log --oneline -5", "git log main..HEAD",
    "git log --format=%H%x09%s -1", "git show HEAD --stat", "git status", "git blame a.py",
    "pytest", "pytest -q", "pytest -q -k test_a", "pytest tests/test_a.py::test_b -x",
    "python3 -m pytest -q", "python -m pytest tests", "npm test", "npm test -- -k x",
    "go test ./...", "go test -run TestX -v ./pkg", "cargo test", "cargo test --lib foo",
]
