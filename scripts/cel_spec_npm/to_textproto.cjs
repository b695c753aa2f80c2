// Writes cel-spec's simple conformance tests, as the npm package @bufbuild/cel-spec ships
// them (getConformanceSuite(): one suite a cel-spec file, holding its sections, holding
// cel.expr.conformance.test.SimpleTest messages), back out as protobuf text format: one
// `<suite name>.textproto` a file in OUT_DIR, the shape of cel-spec's own
// tests/simple/testdata/*.textproto, which tests/conformance/cel/textproto.py reads.
// Any values are expanded (`[type.googleapis.com/...] {...}`) with the package's registry.
// Prints a JSON summary (the package's version, the cel-spec ref it holds, the files).
//
//     node to_textproto.cjs OUT_DIR        (run by scripts/refresh_cel_spec.py --npm)
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { ScalarType } = require("@bufbuild/protobuf");
const { reflect } = require("@bufbuild/protobuf/reflect");
const { anyUnpack } = require("@bufbuild/protobuf/wkt");
const { SimpleTestSchema } = require("@bufbuild/cel-spec/cel/expr/conformance/test/simple_pb.js");
const { getConformanceSuite } = require("@bufbuild/cel-spec/testdata/tests.js");
const { getTestRegistry } = require("@bufbuild/cel-spec/testdata/registry.js");

const registry = getTestRegistry();
const utf8 = new TextEncoder();

// A text-format string literal: printable ASCII as is, every other byte as an octal escape
// (text-format strings are byte strings; the reader decodes string fields as UTF-8).
function quote(bytes) {
  let out = '"';
  for (const b of bytes) {
    if (b === 0x22 || b === 0x5c) out += "\\" + String.fromCharCode(b);
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += "\\" + b.toString(8).padStart(3, "0");
  }
  return out + '"';
}

function floating(x) {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (Object.is(x, -0)) return "-0.0";
  const s = String(x);
  return /[.eE]/.test(s) ? s : s + ".0";
}

function scalar(type, v) {
  switch (type) {
    case ScalarType.STRING:
      return quote(utf8.encode(v));
    case ScalarType.BYTES:
      return quote(v);
    case ScalarType.BOOL:
      return v ? "true" : "false";
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return floating(v);
    default: // the integer types: number, bigint or string
      return String(v);
  }
}

function enumValue(desc, n) {
  const v = desc.values.find((e) => e.number === n);
  return v ? v.name : String(n);
}

// The body of one message (a ReflectMessage), one field a line, at `indent`.
function body(rm, indent) {
  const lines = [];
  if (rm.desc.typeName === "google.protobuf.Any") {
    const inner = anyUnpack(rm.message, registry);
    const desc = inner && registry.getMessage(inner.$typeName);
    if (desc) {
      const url = rm.message.typeUrl;
      lines.push(`${indent}[${url}] {`, ...body(reflect(desc, inner), indent + "  "), `${indent}}`);
      return lines;
    }
  }
  for (const f of rm.fields) {
    if (!rm.isSet(f)) continue;
    const v = rm.get(f);
    const one = (kind, x) => {
      if (kind === "message") {
        lines.push(`${indent}${f.name} {`, ...body(x, indent + "  "), `${indent}}`);
      } else if (kind === "enum") {
        lines.push(`${indent}${f.name}: ${enumValue(f.enum, x)}`);
      } else {
        lines.push(`${indent}${f.name}: ${scalar(f.scalar, x)}`);
      }
    };
    if (f.fieldKind === "list") {
      for (const x of v) one(f.listKind, x);
    } else if (f.fieldKind === "map") {
      for (const [k, x] of v) {
        lines.push(`${indent}${f.name} {`, `${indent}  key: ${scalar(f.mapKey, k)}`);
        if (f.mapKind === "message") {
          lines.push(`${indent}  value {`, ...body(x, indent + "    "), `${indent}  }`);
        } else if (f.mapKind === "enum") {
          lines.push(`${indent}  value: ${enumValue(f.enum, x)}`);
        } else {
          lines.push(`${indent}  value: ${scalar(f.scalar, x)}`);
        }
        lines.push(`${indent}}`);
      }
    } else {
      one(f.fieldKind, v);
    }
  }
  return lines;
}

function main() {
  const out = process.argv[2];
  if (!out) {
    console.error("usage: node to_textproto.cjs OUT_DIR");
    process.exit(2);
  }
  fs.mkdirSync(out, { recursive: true });
  // dist/cjs/testdata/tests.js -> the package's own package.json (not an export)
  const tests = require.resolve("@bufbuild/cel-spec/testdata/tests.js");
  const pkg = JSON.parse(fs.readFileSync(path.resolve(tests, "../../../../package.json"), "utf8"));
  const files = {};
  for (const file of getConformanceSuite().suites) {
    const lines = [
      `# cel-spec's ${file.name} conformance tests, from npm ${pkg.name}@${pkg.version}`,
      `# (cel-spec ${pkg.upstreamCelSpecRef}), written back as text format.`,
      `name: ${quote(utf8.encode(file.name))}`,
    ];
    let n = 0;
    for (const section of file.suites) {
      lines.push("section {", `  name: ${quote(utf8.encode(section.name))}`);
      for (const t of section.tests) {
        lines.push("  test {", ...body(reflect(SimpleTestSchema, t.original), "    "), "  }");
        n++;
      }
      lines.push("}");
    }
    fs.writeFileSync(path.join(out, `${file.name}.textproto`), lines.join("\n") + "\n");
    files[file.name] = n;
  }
  console.log(JSON.stringify({ package: pkg.name, version: pkg.version, celSpec: pkg.upstreamCelSpecRef, files }));
}

main();
