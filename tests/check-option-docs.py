#!/usr/bin/env python3
"""--help, the man page and README agree on the options (issue 26 item 4).

  check-option-docs.py GDRCHECK MAN README

- every option --help lists is described in the man page, and every option
  the man page or README names is one --help lists (no stale option);
- each default and value range --help states ("default 30", "4K to 1G",
  "(default)" after a value) is stated the same in the option's man
  paragraph, and README states no other default for it.
Prints "option-docs: N passed, N failed".
"""
import re
import subprocess
import sys

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL", what)


def help_options(text):
    """{option: its help text (the option's line and its continuation)}."""
    opts, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"\s+(?:-\w, )?(--[a-z][a-z-]*)(\[?=?[A-Z]*\]?)?\s*(.*)", line)
        if m and line.lstrip().startswith("-"):
            cur = m.group(1)
            opts[cur] = m.group(3)
        elif cur and line.startswith(" " * 20):
            opts[cur] += " " + line.strip()
        else:
            cur = None
    return opts


def man_paragraphs(text):
    """{option: the text of its .TP paragraph(s)} from the man source."""
    plain = text.replace("\\-", "-").replace("\\&", "")
    paras, cur = {}, None
    for line in plain.splitlines():
        if line.startswith(".TP") or line.startswith(".SH") or line.startswith(".PP"):
            cur = None
            continue
        m = re.match(r'\.B[IR]? +(-\w(?:, | ", " ))?(--[a-z][a-z-]*)', line)
        if m and cur is None:
            cur = m.group(2)
            paras.setdefault(cur, "")
            continue
        if cur:
            paras[cur] += " " + re.sub(r"^\.[A-Z]+ ", "", line)
    return paras


def facts(text):
    """The defaults and ranges a text states."""
    out = set()
    for m in re.finditer(r"default:? ([0-9][0-9.]*[KMG]?)\b", text):
        out.add(("default", m.group(1)))
    for m in re.finditer(r"\b([0-9][0-9.]*[KMG]?) to ([0-9][0-9.]*[KMG]?)\b", text):
        out.add(("range", m.group(1) + "-" + m.group(2)))
    return out


def main(binary, man, readme):
    help_text = subprocess.run([binary, "--help"], capture_output=True,
                               text=True).stdout
    hopts = help_options(help_text)
    check(len(hopts) > 20, f"--help lists {len(hopts)} options")
    man_text = open(man).read()
    paras = man_paragraphs(man_text)
    readme_text = open(readme).read()
    known = set(hopts) | {"--help", "--version"}
    for opt, text in sorted(hopts.items()):
        para = paras.get(opt)
        check(para is not None, f"{opt}: no paragraph in the man page")
        if para is None:
            continue
        for kind, value in sorted(facts(text)):
            check((kind, value) in facts(para),
                  f"{opt}: --help says {kind} {value}, its man paragraph does not")
        for m in re.finditer(re.escape(opt) + r"\b[^.\n]{0,60}?\(default ([0-9][0-9.]*)\)",
                             readme_text):
            check(("default", m.group(1)) in facts(text),
                  f"{opt}: README says default {m.group(1)}, --help does not")
    for name, text in (("man page", man_text.replace("\\-", "-")),
                       ("README", readme_text)):
        for opt in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*[a-z])", text))):
            if opt in known or opt.startswith("--use") or opt in OTHER_TOOLS:
                continue
            check(False, f"{name} names {opt}, which --help does not list")
    print(f"option-docs: {passed} passed, {failed} failed")
    return 1 if failed else 0


# Options of other programs the docs quote (perftest, srun, kubectl, the
# project's own scripts such as install-deps.sh and gen-sysroot.py).
OTHER_TOOLS = {
    "--gres", "--gpus", "--ntasks", "--nodes", "--nodelist", "--wrap",
    "--privileged", "--device", "--cap-add", "--network", "--rm",
    "--warnings", "--output", "--dry-run", "--filename", "--all",
    "--ulimit", "--build", "--vfs",
}

if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
