#!/usr/bin/env python3
"""Write hkb manifest entries for the candle symbols of one module from the spec TSV.

Usage: tools/import_candle_spec.py SPEC_TSV MODULE [SYMBOL_REGEX]

Prints the manifest JSON for MODULE (candle's module name, e.g. AFFINE) to stdout, every phase of
it, or only the symbols SYMBOL_REGEX matches in full (a module that hkb implements in parts, e.g.
QUANTIZED). Parameter types are written in hkb's manifest vocabulary (loader/manifest.cpp:
usize, u8 .. f64, bool, and pointers to those or to void). The manifest in the repository is the
source of truth once written; this only saves typing it.
"""
import json
import re
import sys

SCALARS = {
    "size_t": "usize", "uint8_t": "u8", "uint16_t": "u16", "uint32_t": "u32", "int16_t": "i16",
    "int32_t": "i32", "int": "i32", "int64_t": "i64", "uint64_t": "u64", "float": "f32",
    "double": "f64", "bool": "bool", "__half": "f16", "__nv_bfloat16": "bf16",
    "__nv_fp8_e4m3": "f8e4m3", "half": "f16", "void": "void", "unsigned": "u32",
    "dfloat": "f32",  # candle builds its QUANTIZED module without GGML_CUDA_F16: dfloat is float
}


def convert_param(text):
    text = text.replace("__restrict__", " ").replace("unsigned int", "unsigned")
    m = re.fullmatch(r"\s*(const\s+)?([A-Za-z_0-9]+)\s*(\*?)\s*([A-Za-z_0-9]+)\s*", text)
    if not m:
        raise SystemExit(f"cannot parse parameter '{text}'")
    const, ctype, star, name = m.groups()
    base = SCALARS[ctype]
    if base == "void" and not star:
        raise SystemExit(f"void parameter '{text}'")
    if star:
        return [name, ("const " if const else "") + base + "*"]
    return [name, base]


def main():
    spec, module = sys.argv[1], sys.argv[2]
    keep = re.compile(sys.argv[3]) if len(sys.argv) > 3 else None
    kernels = []
    with open(spec) as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            row = dict(zip(header, line.rstrip("\n").split("\t")))
            if row["module"] != module:
                continue
            if keep and not keep.fullmatch(row["symbol"]):
                continue
            params = [convert_param(p) for p in row["params"].split(";") if p.strip()]
            kernels.append({"name": row["symbol"], "params": params})
    kernels.sort(key=lambda k: k["name"])
    print(dump_manifest(module.lower(), kernels), end="")


def dump_manifest(module, kernels):
    """One kernel per line, so diffs of the inventory read one symbol at a time."""
    rows = [f'  {{"name": "{k["name"]}", "params": {json.dumps(k["params"])}}}' for k in kernels]
    return '{\n "module": "%s",\n "kernels": [\n%s\n ]\n}\n' % (module, ",\n".join(rows))


if __name__ == "__main__":
    main()
