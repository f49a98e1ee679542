#!/usr/bin/env python3
"""Names the components' JIT code in a `perf` profile of a running `assay`.

wasmtime's own perf map needs its `profiling` feature, which the release
build leaves out. But each compiled component in assay's compile cache
(`*.cwasm`: a 32-byte header, then an ELF image whose `.text` has a symbol
for every function) is mapped into the process as one executable mapping of
exactly its `.text`'s size. This script matches the process's anonymous
executable mappings with the cache's artifacts by size and writes
`/tmp/perf-PID.map`, which `perf report` reads for `[JIT]` samples:

    assay run BIG-SUITE --cache-dir CACHE &        # a run long enough to sample
    perf record -F 4000 -e cpu-clock -p $! -o jit.data -- sleep 2 &
    sleep 0.5; benches/perf-map.py $! CACHE        # while the process lives
    wait; perf report -i jit.data --sort dso,sym

Symbols are `ARTIFACT:NAME` (the first 8 hex digits of the artifact's cache
key, and the function's mangled Rust name). Two artifacts of the same
`.text` size cannot be told apart: the script says so and names neither.
Needs `readelf` (binutils).
"""

import pathlib
import subprocess
import sys
import tempfile

HEADER = 32  # the cache's HMAC in front of the ELF image (sandbox/cache.rs)


def text_size(elf: pathlib.Path) -> int:
    sections = subprocess.run(["readelf", "-SW", str(elf)], capture_output=True, text=True, check=True).stdout
    line = next(l for l in sections.splitlines() if " .text " in l)
    return int(line.split("]", 1)[1].split()[4], 16)


def functions(elf: pathlib.Path):
    symbols = subprocess.run(["readelf", "-sW", str(elf)], capture_output=True, text=True, check=True).stdout
    for line in symbols.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[3] == "FUNC":
            # `wasm[0]::function[N]::NAME` -> NAME
            yield int(fields[1], 16), int(fields[2]), fields[7].split("::", 2)[-1]


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: benches/perf-map.py PID CACHE_DIR", file=sys.stderr)
        return 2
    pid, cache = sys.argv[1], pathlib.Path(sys.argv[2])
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="perf-map-"))
    by_size: dict[int, list[tuple[str, pathlib.Path]]] = {}
    for artifact in sorted(cache.glob("*.cwasm")):
        elf = scratch / (artifact.stem + ".elf")
        elf.write_bytes(artifact.read_bytes()[HEADER:])
        by_size.setdefault(text_size(elf), []).append((artifact.stem[:8], elf))
    lines = []
    with open(f"/proc/{pid}/maps") as maps:
        for mapping in maps:
            fields = mapping.split()
            # Anonymous executable mappings: the components' code.
            if fields[1] != "r-xp" or len(fields) > 5:
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            matches = by_size.get(end - start, [])
            if len(matches) != 1:
                print(f"{fields[0]}: {len(matches)} artifacts of this size; not named", file=sys.stderr)
                continue
            name, elf = matches[0]
            lines += [f"{start + offset:x} {size:x} {name}:{symbol}" for offset, size, symbol in functions(elf)]
            print(f"{fields[0]}: {name}", file=sys.stderr)
    pathlib.Path(f"/tmp/perf-{pid}.map").write_text("\n".join(lines) + "\n")
    print(f"/tmp/perf-{pid}.map: {len(lines)} functions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
