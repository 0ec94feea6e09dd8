#!/usr/bin/env python3
"""Instruction mix per vertex of a skinning kernel, by the execution ports each instruction needs
on this core: what a profile says without hardware counters.

    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=CG.out PROGRAM ARGS...
    tools/ozz-compare/port_mix.py CG.out PROGRAM FUNCTION VERTICES [--trace LOOP.s]

FUNCTION: a regular expression found in the names (as callgrind shows them) of the functions
the kernel runs in (`drive_avx2|Rotation8::apply` for skinblend's SIMD kernels, whose rigid
motion the compiler keeps out of line; `SkinningPNNOIT4` for ozz's positions + normals job with
four influences); VERTICES: how many vertices the run skinned in that function (vertices x calls).
Every executed instruction of the matching functions is disassembled (objdump) and counted once
per execution, so the figures are per vertex. Examples (kernel_instructions: `cargo bench -p
skinblend --bench kernel_instructions --no-run`; the ozz driver built with MARCH=haswell, which
valgrind can run):

    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=/tmp/lbs.out \\
        KERNEL_INSTRUCTIONS linear pn 4 20000 2
    tools/ozz-compare/port_mix.py /tmp/lbs.out KERNEL_INSTRUCTIONS 'drive_avx2|Rotation8::apply' 40000
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=/tmp/ozz.out \\
        OZZ_DRIVER --vertices 20000 --only pn-blended --threads 1 --calls 2
    tools/ozz-compare/port_mix.py /tmp/ozz.out OZZ_DRIVER SkinningPNNOIT4 40000

The classes follow what `port_probe.c` measures on this core (its command is in its header): the
FP arithmetic (multiply, FMA, add, compare, min/max, vector shifts) issues on two ports;
`vshufps`-type in-lane shuffles on two (one of them shared with the arithmetic); unpacks,
`vpermilps`, lane-crossing shuffles, inserts and extracts between registers, widening moves and
`vhaddps` (two of its three uops) on one; logic, blends and integer vector adds on any of the
three vector ports; `vtestps`, `vmovmskps`, division, square roots and `vrsqrtps` on one. Moves
between registers and zeroing idioms are eliminated at rename. A memory operand adds a load; an
instruction that writes memory is a store (with its data operation, if any, counted too). Scalar
integer instructions and branches are counted apart (their five ports include the three vector
ones). The per-vertex lower bound printed last is the largest of: vector uops / 3, two-port
arithmetic / 2, one-port shuffles / 1, loads / 2.8 (port_probe.c's load rate), each in cycles
per vertex; measured cycles per vertex above it are what no port count explains.

`--trace LOOP.s` also writes one iteration of the kernel's loop in execution order, for LLVM's
machine-code analyser, which simulates the out-of-order core (ports, scheduler, reorder buffer,
load and store queues) on it: `llvm-mca-19 -mcpu=sapphirerapids -iterations=200 -dispatch-stats
LOOP.s` (Debian: llvm-19; version 14 has no model of this core). The walk starts at the
lowest-addressed instruction of the outer loop (the smallest execution count that a tenth of all
executions have: once per block, or per vertex for ozz). At a jump it takes an inner loop's
backward jump as many times as that loop ran per outer iteration; otherwise it follows a jump
whose target ran as often as the outer loop (within 1 %) and whose next instruction did not, and
falls through. It follows calls into the functions FUNCTION matches, leaves out jumps, calls and
returns, and ends where it started.
"""
import collections
import re
import subprocess
import sys

ARITHMETIC = re.compile(r"^v(fn?m(add|sub)|mul|add|sub|cmp|max|min|psll|psrl|psra)")
TWO_PORT_SHUFFLE = {"vshufps", "vmovshdup", "vmovsldup", "vpshufd"}
ONE_PORT_SHUFFLE = re.compile(
    r"^v(unpck|permil|perm2|permps|permd|permpd|permq|extract[fi]128|extractps|pmovzx|pmovsx|broadcast|movhlps|movlhps|pshufb)"
)
ONE_PORT_OTHER = re.compile(r"^v(testps|movmskps|pmovmskb|div|sqrt|rsqrt|rcp|movd|movq)")
ANY_PORT = re.compile(r"^v(blend|pblend|and|or|xor|pand|por|pxor|padd|psub|pcmpeq|pcmpgt|insert[fi]128|insertps)")
MOVES = re.compile(r"^v(movups|movaps|movdqa|movdqu|movss|movlps|movhps|movsd)$")


def counts_by_address(callgrind_out, function):
    """Execution count of each instruction address of the functions whose name matches `function`."""
    names, counts = {}, collections.Counter()
    current, last, skip_next = None, 0, False
    for line in open(callgrind_out):
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?", line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            if m.group(1) == "fn":
                current = names.get(m.group(2), "")
            continue
        if line.startswith("calls="):
            skip_next = True  # the next cost line is the call's inclusive cost
            continue
        m = re.match(r"^(0x[0-9a-f]+|[+-]\d+|\*)\s+\S+\s+(\d+)", line)
        if not m:
            continue
        token = m.group(1)
        address = int(token, 16) if token.startswith("0x") else last if token == "*" else last + int(token)
        last = address
        if skip_next:
            skip_next = False
            continue
        if current and re.search(function, current):
            counts[address] += int(m.group(2))
    return counts


def disassembly(program, addresses):
    """Instruction text by address for every function symbol holding one of `addresses`."""
    symbols = []
    for line in subprocess.run(["nm", "-S", program], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] in "tTwW":
            start, size = int(parts[0], 16), int(parts[1], 16)
            if any(start <= a < start + size for a in addresses):
                symbols.append((start, start + size))
    text = {}
    for start, stop in sorted(set(symbols)):
        out = subprocess.run(
            ["objdump", "-d", "--no-show-raw-insn", f"--start-address={start:#x}", f"--stop-address={stop:#x}", program],
            capture_output=True, text=True, check=True,
        ).stdout
        for line in out.splitlines():
            m = re.match(r"\s*([0-9a-f]+):\s+(\S.*)$", line)
            if m:
                text[int(m.group(1), 16)] = m.group(2).split("#")[0].strip()
    return text


def classify(instruction):
    """The classes (with multiplicity) that one instruction in AT&T syntax counts towards."""
    op, _, operands = instruction.partition(" ")
    operands = operands.strip()
    memory = "(" in operands
    # AT&T: the destination is the last operand.
    writes_memory = memory and operands.rstrip().endswith(")")
    registers = re.findall(r"%[xyz]mm(\d+)", operands)
    out = collections.Counter()
    if memory:
        out["store" if writes_memory else "load"] += 1
    if op.startswith("j") or op in ("call", "ret"):
        out["branch"] += 1
    elif op == "vzeroupper":
        out["eliminated"] += 1
    elif not op.startswith("v"):
        if op.startswith("nop") or op in ("data16", "cs"):
            out["eliminated"] += 1
        elif op == "mov" and memory:
            pass  # a pure load or store
        elif op == "mov":
            out["eliminated"] += 1
        elif op.startswith("movz") and memory:
            pass  # a load
        else:
            out["integer"] += 1
    elif MOVES.match(op):
        if not memory:
            out["eliminated"] += 1
    elif op in ("vxorps", "vpxor", "vxorpd") and len(registers) == 3 and len(set(registers)) == 1:
        out["eliminated"] += 1  # zero idiom
    elif op == "vhaddps":
        out["one-port shuffle"] += 2
        out["two-port arithmetic"] += 1
    elif ARITHMETIC.match(op):
        out["two-port arithmetic"] += 1
    elif op in TWO_PORT_SHUFFLE:
        out["two-port shuffle"] += 1
    elif op.startswith("vbroadcast") and memory:
        pass  # a load
    elif op.startswith("vinsertf128") or op.startswith("vinserti128"):
        out["any-port" if memory else "one-port shuffle"] += 1
    elif ONE_PORT_SHUFFLE.match(op):
        out["one-port shuffle"] += 1
    elif ONE_PORT_OTHER.match(op):
        out["one-port other"] += 1
    elif ANY_PORT.match(op):
        out["any-port"] += 1
    else:
        out["unclassified"] += 1
    return out


def loop_trace(counts, text):
    """One iteration of the hottest loop, in execution order, as AT&T lines for llvm-mca."""
    addresses = sorted(text)
    order = {a: i for i, a in enumerate(addresses)}
    executed = collections.Counter()
    for count in counts.values():
        executed[count] += count
    total = sum(executed.values())
    # The outer loop: the smallest count that a tenth of all executions have (an inner loop,
    # such as DQS's over the influences, runs a multiple of it).
    period = min(c for c, n in executed.items() if n >= 0.1 * total)
    start = min(a for a, c in counts.items() if c == period and a in text)
    # Within 1 % of the period: a pipelined loop runs its prologue or epilogue parts once less.
    hot = lambda a: counts.get(a, 0) >= 0.99 * period
    taken = collections.Counter()
    returns = []  # where each followed call returns
    lines, i = [], order[start]
    for _ in range(50000):
        address = addresses[i]
        if lines and address == start:
            return lines
        instruction = text[address]
        op = instruction.split()[0]
        target = re.match(r"^j\w*\s+([0-9a-f]+)", instruction)
        if target:
            to = int(target.group(1), 16)
            following = addresses[i + 1] if i + 1 < len(addresses) else None
            # An inner loop's back edge: taken (its runs per outer iteration − 1) times.
            repeats = round(counts.get(to, 0) / period) - 1
            inner = to < address and hot(to) and following and hot(following) and repeats > 0
            if inner and taken[address] < repeats:
                taken[address] += 1
                i = order[to]
                continue
            if inner:
                taken[address] = 0
            elif op == "jmp" or (hot(to) and not (following and hot(following))):
                if to == start:
                    return lines
                i = order[to]
                continue
        elif op.startswith("call"):
            callee = re.match(r"^call\w*\s+([0-9a-f]+)", instruction)
            if callee and int(callee.group(1), 16) in order:
                returns.append(i + 1)
                i = order[int(callee.group(1), 16)]
                continue
            print(f"warning: {instruction} is not followed (FUNCTION does not match it)",
                  file=sys.stderr)
        elif op.startswith("ret") and returns:
            i = returns.pop()
            continue
        elif not (op.startswith("nop") or op in ("data16", "cs")):
            lines.append(instruction)
        i += 1
    sys.exit("the walk did not come back to where it started: no single hot loop")


def main():
    arguments = sys.argv[1:]
    trace_path = None
    if "--trace" in arguments:
        at = arguments.index("--trace")
        trace_path = arguments[at + 1] if at + 1 < len(arguments) else None
        del arguments[at : at + 2]
    if len(arguments) != 4 or ("--trace" in sys.argv and not trace_path):
        sys.exit(__doc__)
    callgrind_out, program, function, vertices = arguments[0], arguments[1], arguments[2], int(arguments[3])
    counts = counts_by_address(callgrind_out, function)
    if not counts:
        sys.exit(f"no instruction of a function matching {function!r} in {callgrind_out}")
    text = disassembly(program, set(counts))
    totals, unknown = collections.Counter(), collections.Counter()
    for address, count in counts.items():
        instruction = text.get(address)
        if instruction is None:
            unknown["(not disassembled)"] += count
            continue
        totals["instructions"] += count
        for cls, n in classify(instruction).items():
            totals[cls] += n * count
            if cls == "unclassified":
                unknown[instruction.split()[0]] += count
    per = {cls: n / vertices for cls, n in totals.items()}
    order = [
        "instructions", "load", "store", "two-port arithmetic", "two-port shuffle",
        "one-port shuffle", "one-port other", "any-port", "integer", "branch", "eliminated",
        "unclassified",
    ]
    for cls in order:
        if cls in per:
            print(f"{cls:22s} {per[cls]:7.2f}")
    vector = sum(per.get(c, 0.0) for c in order[3:8])
    bound = max(
        vector / 3,
        per.get("two-port arithmetic", 0.0) / 2,
        per.get("one-port shuffle", 0.0),
        per.get("load", 0.0) / 2.8,
    )
    print(f"{'vector uops':22s} {vector:7.2f}")
    print(f"{'port bound, cycles':22s} {bound:7.2f}")
    if unknown:
        print("not classified:", dict(unknown.most_common(8)), file=sys.stderr)
    if trace_path:
        lines = loop_trace(counts, text)
        with open(trace_path, "w") as out:
            out.write("\n".join(lines) + "\n")
        print(f"{len(lines)} instructions of one loop iteration written to {trace_path}")


if __name__ == "__main__":
    main()
