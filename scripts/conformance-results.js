// scripts/conformance-results.js: reads the results of one conformance-suite run (no jq needed).
//
//   node conformance-results.js summary  OUT SUITE_LOG
//       prints "N passed, M failed": the SUCCESS and FAILURE checks, as the suite's own total.
//   node conformance-results.js empty    OUT SUITE_LOG
//       prints, one a line, every scenario that ran zero checks (none SUCCESS, FAILURE or
//       WARNING) and was not skipped by the suite itself: it tested nothing, which
//       scripts/test.sh counts as a failure.
//   node conformance-results.js skipped  OUT SUITE_LOG
//       prints "SCENARIO: REASON" for every scenario the suite itself skipped (a SKIPPED check
//       and no scored one), e.g. a harness not yet written for the current spec.
//   node conformance-results.js unclean  OUT SUITE_LOG
//       prints "SCENARIO CHECK STATUS: MESSAGE" for every check that is not SUCCESS (FAILURE,
//       WARNING or SKIPPED), for the steps that must pass every check of their scenarios.
//   node conformance-results.js scenarios OUT SUITE_LOG
//       prints the number of scenarios with a result.
//   node conformance-results.js baseline OUT SUITE_LOG SCENARIO...
//       prints an expected-failures YAML listing each given (scored) scenario that fails,
//       with the first failing check's message as a comment.
//
// OUT is the suite's -o folder: OUT/server-<scenario>-<timestamp>/checks.json (a client scenario:
// OUT/<scenario>-<timestamp>/, and OUT/auth/<name>-<timestamp>/ for auth/<name>), each an array of
// {id, status, errorMessage?, ...}. A scenario that crashed writes no checks.json; the suite
// prints "Failed to run scenario NAME: ERROR" instead and counts it as one FAILURE, so SUITE_LOG
// (the suite's stdout+stderr) is read for those lines.
'use strict';
const fs = require('fs');
const path = require('path');

const [mode, outDir, suiteLog, ...scored] = process.argv.slice(2);

// results: Map scenario -> array of checks
const results = new Map();
// A scenario whose name has a slash (the client's auth/NAME) is one folder deeper: OUT/auth/NAME-<timestamp>.
const readResults = (dir, prefix) => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const file = path.join(dir, entry.name, 'checks.json');
    if (!fs.existsSync(file)) {
      if (!prefix) readResults(path.join(dir, entry.name), entry.name + '/');
      continue;
    }
    const scenario = prefix + entry.name.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    results.set(scenario, JSON.parse(fs.readFileSync(file, 'utf8')));
  }
};
if (outDir && fs.existsSync(outDir)) readResults(outDir, '');
if (suiteLog && fs.existsSync(suiteLog)) {
  const re = /^Failed to run scenario (\S+?): (.*)$/gm;
  for (const m of fs.readFileSync(suiteLog, 'utf8').matchAll(re)) {
    results.set(m[1], [{ id: m[1], status: 'FAILURE', errorMessage: `scenario crashed: ${m[2]}` }]);
  }
}

// A scenario fails if any check is FAILURE or WARNING (the baseline rule of the suite).
const bad = (c) => c.status === 'FAILURE' || c.status === 'WARNING';

// One line of text, without the server's port, so the baseline does not change from run to run.
const oneLine = (s) =>
  String(s ?? '').replace(/\s+/g, ' ').replace(/(127\.0\.0\.1|localhost):\d+/g, '$1:PORT').trim().slice(0, 160);

if (mode === 'summary') {
  let passed = 0, failed = 0;
  for (const checks of results.values()) {
    for (const c of checks) {
      if (c.status === 'SUCCESS') passed++;
      else if (c.status === 'FAILURE') failed++;
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
} else if (mode === 'empty' || mode === 'skipped') {
  const scored = (c) => c.status === 'SUCCESS' || bad(c);
  for (const [scenario, checks] of [...results].sort()) {
    if (checks.some(scored)) continue;
    const skip = checks.find((c) => c.status === 'SKIPPED');
    if (mode === 'empty' && !skip) console.log(scenario);
    if (mode === 'skipped' && skip) console.log(`${scenario}: ${oneLine(skip.errorMessage || skip.description)}`);
  }
} else if (mode === 'unclean') {
  for (const [scenario, checks] of [...results].sort()) {
    for (const c of checks) {
      if (c.status !== 'SUCCESS') console.log(`${scenario} ${c.id} ${c.status}: ${oneLine(c.errorMessage || c.description)}`);
    }
  }
} else if (mode === 'scenarios') {
  console.log(results.size);
} else if (mode === 'baseline') {
  const lines = [];
  for (const scenario of scored) {
    const checks = results.get(scenario);
    if (!checks) {
      console.error(`warning: no result for scenario ${scenario}; not listed`);
      continue;
    }
    const first = checks.find((c) => c.status === 'FAILURE') ?? checks.find(bad);
    if (!first) continue;
    const reason = `${first.status} ${first.id}: ${oneLine(first.errorMessage || first.description || first.name)}`;
    lines.push(`  - ${scenario}  # ${reason}`);
  }
  console.log(lines.length ? `server:\n${lines.join('\n')}` : 'server: []');
} else {
  console.error('usage: conformance-results.js summary|empty|skipped|unclean|scenarios|baseline OUT SUITE_LOG [SCENARIO...]');
  process.exit(2);
}
