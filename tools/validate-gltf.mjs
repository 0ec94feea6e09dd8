#!/usr/bin/env node
// Validates glTF 2.0 files with the Khronos glTF-Validator (npm package `gltf-validator`).
// Usage: node tools/validate-gltf.mjs FILE... [--json]
// Prints one summary line per file (errors / warnings / infos / hints, and each error's code,
// message and JSON pointer); exits 1 if any file has an error, 2 on bad usage or unreadable input.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const validator = require('gltf-validator');

const args = process.argv.slice(2);
const json = args.includes('--json');
const files = args.filter((a) => a !== '--json');
if (files.length === 0) {
  console.error('usage: node tools/validate-gltf.mjs FILE... [--json]');
  process.exit(2);
}

let failed = false;
for (const file of files) {
  let bytes;
  try {
    bytes = new Uint8Array(await readFile(file));
  } catch (error) {
    console.error(`${file}: cannot read: ${error.message}`);
    process.exit(2);
  }
  const report = await validator.validateBytes(bytes, {
    uri: path.basename(file),
    maxIssues: 0,
    externalResourceFunction: (uri) =>
      readFile(path.resolve(path.dirname(file), decodeURIComponent(uri))).then((b) => new Uint8Array(b)),
  });
  const i = report.issues;
  if (json) {
    console.log(JSON.stringify(report, null, 2));
  }
  console.log(`${file}: ${i.numErrors} errors, ${i.numWarnings} warnings, ${i.numInfos} infos, ${i.numHints} hints`);
  for (const m of i.messages) {
    if (m.severity === 0 || (!json && m.severity === 1)) {
      const kind = m.severity === 0 ? 'error' : 'warning';
      console.log(`  ${kind} ${m.code}: ${m.message} at ${m.pointer ?? m.offset ?? ''}`);
    }
  }
  if (i.numErrors > 0) failed = true;
}
process.exit(failed ? 1 : 0);
