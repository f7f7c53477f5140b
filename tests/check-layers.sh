#!/bin/sh
# Every #include points down the layers (or sideways inside one), and no
# file-level include circle exists. Layers, bottom-up (the Makefile lists
# CORE_SRCS in the same order):
#   core    the result model, name tables, allocation, clock
#   decode  pure decoders of sysfs/procfs/config-space bytes
#   access  the sysroot, vendor libraries (dlopen, worker), libpci, capture
#   nccl    NCCL's rules and path model, versioned, pure
#   gate    the gate API: run context, inventory, PCIe tree, emit
#   probes  the gate functions
#   engine  the gate table, verdicts, policy
#   report  renderers (text, JSON, JUnit, Prometheus), redaction
#   gdrcheck.c  options and main
# Prints "layers: ok" or every offending edge, and exits 1.
cd "$(dirname "$0")/.." || exit 2
exec python3 - "$@" <<'PY'
import os, re, sys
rank = {'core': 0, 'decode': 1, 'access': 2, 'nccl': 3, 'gate': 4,
        'probes': 5, 'engine': 6, 'report': 7, '.': 8}
files = [os.path.join(d, f) if d != '.' else f
         for d in rank for f in sorted(os.listdir(d))
         if f.endswith(('.c', '.h')) and (d != '.' or f == 'gdrcheck.c')]
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
bad, graph = [], {}
for f in files:
    src = os.path.dirname(f) or '.'
    deps = inc.findall(open(f, encoding='utf-8').read())
    graph[f] = [d for d in deps if os.path.exists(d)]
    for d in deps:
        dst = os.path.dirname(d) or '.'
        if dst not in rank:
            bad.append(f'{f}: includes "{d}" from no known layer')
        elif rank[dst] > rank[src]:
            bad.append(f'{f} ({src}) includes {d} ({dst}): points up')
    # Decoders are pure: only core's name tables, never the model.
    if src == 'decode':
        for d in deps:
            if d.startswith('core/') and d != 'core/names.h':
                bad.append(f'{f}: a decoder includes {d}')
# The NCCL model is pure: nccl/ files take typed facts and return answers.
# None includes the access layer (the sysroot, the vendor libraries) or
# calls a reader or an emitter; the facts are gathered by
# probes/nccl_facts.c. Two named readers are the exception: nccl/conf.c
# (NCCL's configuration files, through the sysroot) and nccl/libfind.c (a
# library's version string from a file descriptor).
nccl_readers = {'nccl/conf.c', 'nccl/libfind.c'}
io_call = re.compile(r'\b(sysroot_\w+|capfact_\w+|open|fopen|read|pread|'
                     r'realpath|readlink|opendir|getenv|stat|lstat|access|'
                     r'emit|ev_\w+|remedy_\w+)\s*\(')
for f in files:
    if not f.startswith('nccl/') or f in nccl_readers:
        continue
    body = re.sub(r'/\*.*?\*/|//[^\n]*', '', open(f, encoding='utf-8').read(),
                  flags=re.S)
    for d in inc.findall(body):
        if d.startswith(('access/', 'gate/', 'probes/')):
            bad.append(f'{f}: the pure NCCL model includes {d}')
    for fn in sorted(set(io_call.findall(body))):
        bad.append(f'{f}: the pure NCCL model calls {fn}() (facts are '
                   'gathered in probes/nccl_facts.c)')
# The engine runs gates, it does not know their state: no engine/ file
# names the NCCL model's state (ctx->nccl, struct nccl_state) or calls a
# nccl_* function the probes declare (it is freed through ctx_at_end).
probe_nccl = set()
for f in files:
    if f.startswith('probes/') and f.endswith('.h'):
        probe_nccl.update(re.findall(r'\b(nccl_\w+)\s*\(',
                                     open(f, encoding='utf-8').read()))
for f in files:
    if not f.startswith('engine/'):
        continue
    text = open(f, encoding='utf-8').read()
    for w in sorted(set(re.findall(r'\bnccl_state\b|->nccl\b(?!\.)',
                                   text))):
        bad.append(f'{f}: engine reaches into the NCCL model ({w})')
    for fn in sorted(probe_nccl):
        if re.search(r'\b' + fn + r'\s*\(', text):
            bad.append(f'{f}: engine calls {fn}() of the probes')
# The human report's calls run one way: report/text.c calls the parts
# (report/text_sections.h), every part calls only the shared helpers of
# report/text_util.h, and no helper file includes the parts' header.
text_c = [f for f in files if re.match(r'report/text\w*\.c$', f)]
util_fns = set(re.findall(r'\b(text_\w+)\s*\(',
                          open('report/text_util.h', encoding='utf-8').read()))
defined = {}
for f in text_c:
    body = open(f, encoding='utf-8').read()
    for fn in re.findall(r'^(?!static)\w[\w \*]*?\b(\w+)\(', body, re.M):
        defined[fn] = f
for f in text_c:
    if f == 'report/text.c':
        continue
    body = open(f, encoding='utf-8').read()
    for fn in sorted(set(re.findall(r'\b(\w+)\s*\(', body))):
        if defined.get(fn, f) != f and fn not in util_fns:
            bad.append(f'{f}: calls {fn}() of {defined[fn]}: a report '
                       'part calls only report/text_util.h')
    if f in (defined.get(fn) for fn in util_fns):
        if 'report/text_sections.h' in graph[f]:
            bad.append(f'{f}: a shared helper includes the report parts')
for f in files:
    if f.startswith('report/') and f != 'report/text.c' and \
       'report/text.h' in inc.findall(open(f, encoding='utf-8').read()):
        bad.append(f'{f}: includes report/text.h (text.c only)')
# Circles between files (a .c and its own .h are one unit).
def unit(p):
    return p[:-2] if p.endswith(('.c', '.h')) else p
ug = {}
for f, deps in graph.items():
    ug.setdefault(unit(f), set()).update(unit(d) for d in deps if unit(d) != unit(f))
state = {}
def visit(u, stack):
    state[u] = 1
    for v in sorted(ug.get(u, ())):
        if state.get(v) == 1:
            bad.append('circle: ' + ' -> '.join(stack[stack.index(v):] + [v]))
        elif v not in state:
            visit(v, stack + [v])
    state[u] = 2
for u in sorted(ug):
    if u not in state:
        visit(u, [u])
for b in bad:
    print(b)
print('layers: ok' if not bad else f'layers: {len(bad)} problems')
sys.exit(1 if bad else 0)
PY
