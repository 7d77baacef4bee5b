#!/usr/bin/env python3
"""Write hkb manifest entries for the candle symbols of one module from the spec TSV.

Usage: tools/import_candle_spec.py [--keep MANIFEST] SPEC_TSV MODULE [SYMBOL_REGEX]
  e.g. tools/import_candle_spec.py --keep manifests/affine.json manifests/candle-abi.tsv AFFINE \
         > /tmp/affine.json && mv /tmp/affine.json manifests/affine.json

Prints the manifest JSON for MODULE (candle's module name, e.g. AFFINE) to stdout, every phase of
it, or only the symbols SYMBOL_REGEX matches in full (a module that hkb implements in parts, e.g.
QUANTIZED). SPEC_TSV has candle-abi.tsv's columns (module, symbol, params); '#' lines are
comments. Parameter types are written in hkb's manifest vocabulary (see manifests/README.md:
usize, u8 .. f64, bool, and pointers to those or to void). The manifest in the repository is the
source of truth once written; this only saves typing it. --keep MANIFEST carries what only the
manifest knows over to the new one: the module's and each kernel's "launch" rule.
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
    args = sys.argv[1:]
    old = {}
    if args[:1] == ["--keep"]:
        with open(args[1]) as f:
            old = json.load(f)
        args = args[2:]
    if len(args) not in (2, 3):
        raise SystemExit(__doc__)
    spec, module = args[0], args[1]
    keep = re.compile(args[2]) if len(args) > 2 else None
    old_launch = {k["name"]: k["launch"] for k in old.get("kernels", []) if "launch" in k}
    kernels = []
    header = None
    with open(spec) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            cols = line.rstrip("\n").split("\t")
            if header is None:
                header = cols
                continue
            row = dict(zip(header, cols))
            if row["module"] != module:
                continue
            if keep and not keep.fullmatch(row["symbol"]):
                continue
            params = [convert_param(p) for p in row["params"].split(";") if p.strip()]
            kernels.append({"name": row["symbol"], "params": params})
            if row["symbol"] in old_launch:
                kernels[-1]["launch"] = old_launch[row["symbol"]]
    kernels.sort(key=lambda k: k["name"])
    print(dump_manifest(module.lower(), kernels, old.get("launch")), end="")


def dump_manifest(module, kernels, launch=None):
    """One kernel per line, so diffs of the inventory read one symbol at a time."""
    def row(k):
        rule = f'"launch": {json.dumps(k["launch"])}, ' if "launch" in k else ""
        return f'  {{"name": "{k["name"]}", {rule}"params": {json.dumps(k["params"])}}}'
    head = '{\n "module": "%s",\n' % module
    if launch is not None:
        head += ' "launch": %s,\n' % json.dumps(launch)
    rows = [row(k) for k in kernels]
    return head + ' "kernels": [\n%s\n ]\n}\n' % ",\n".join(rows)


if __name__ == "__main__":
    main()
