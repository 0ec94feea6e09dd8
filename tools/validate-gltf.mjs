#!/usr/bin/env node
// Validates glTF 2.0 files with the Khronos glTF-Validator (npm package `gltf-validator`).
// Usage: node tools/validate-gltf.mjs FILE... [--json | --lines]
// Prints one summary line per file (errors / warnings / infos / hints, and each error's code,
// message and JSON pointer); exits 1 if any file has an error, 2 on bad usage or unreadable input.
// --json: the validator's whole report per file. --lines: one JSON object per line and file,
// `{"file", "errors", "warnings", "issues": [{"code", "message", "pointer"}]}` (the first error
// of each code), or `{"file", "errors": null, "crashed"}` where the validator throws,
// so that one node process checks many files (the differential test's mutants).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const validator = require('gltf-validator');

const args = process.argv.slice(2);
const json = args.includes('--json');
const lines = args.includes('--lines');
const files = args.filter((a) => a !== '--json' && a !== '--lines');
if (files.length === 0 || (json && lines)) {
  console.error('usage: node tools/validate-gltf.mjs FILE... [--json | --lines]');
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
  let report;
  try {
    report = await validator.validateBytes(bytes, {
      uri: path.basename(file),
      maxIssues: 0,
      externalResourceFunction: (uri) =>
        readFile(path.resolve(path.dirname(file), decodeURIComponent(uri))).then((b) => new Uint8Array(b)),
    });
  } catch (error) {
    // The validator itself can throw on some malformed files (a bug of its own): say so and
    // go on with the next file.
    failed = true;
    const message = String(error?.message ?? error).split('\n')[0];
    if (lines) {
      console.log(JSON.stringify({ file, errors: null, crashed: message }));
    } else {
      console.log(`${file}: the validator crashed: ${message}`);
    }
    continue;
  }
  const i = report.issues;
  if (i.numErrors > 0) failed = true;
  if (lines) {
    // The first error of each code (a broken accessor repeats one per element).
    const issues = [];
    for (const m of i.messages) {
      if (m.severity === 0 && !issues.some((x) => x.code === m.code)) {
        issues.push({ code: m.code, message: m.message, pointer: m.pointer ?? String(m.offset ?? '') });
      }
    }
    console.log(JSON.stringify({ file, errors: i.numErrors, warnings: i.numWarnings, issues }));
    continue;
  }
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
}
// exitCode, not exit(): exit() would drop what is still queued for a piped stdout.
process.exitCode = failed ? 1 : 0;
