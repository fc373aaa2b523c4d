'use strict';
// prchain's mocha reporter: one line per failure on the console, and at the end a jest-style JSON
// report (testResults → assertionResults) at $PRCHAIN_NODE_REPORT (or `--reporter-options
// output=<path>`, which mocha before 2.2 does not take), for any mocha version (the built-in json
// reporter prints to stdout, mixed with what the tests print).
const fs = require('fs');

function titles(runnable) {
  if (typeof runnable.titlePath === 'function') return runnable.titlePath();
  const found = [];
  for (let node = runnable; node; node = node.parent) if (node.title) found.unshift(node.title);
  return found;
}

// Written at the file's current position: the clean room's report is root's pipe, and Node 8's
// writeFileSync writes at position 0, which a pipe refuses (ESPIPE): eslint's eras of 2016-2019
// read every hidden test as failing.
function writeAll(path, text) {
  const fd = fs.openSync(path, 'w');
  const data = Buffer.from(text);
  for (let done = 0; done < data.length; ) done += fs.writeSync(fd, data, done, data.length - done, null);
  fs.closeSync(fd);
}

function PrchainReporter(runner, options) {
  const reporterOptions = (options && (options.reporterOptions || options.reporterOption)) || {};
  const output = reporterOptions.output || process.env.PRCHAIN_NODE_REPORT;
  const files = new Map();
  const counts = { passed: 0, failed: 0, pending: 0 };
  const add = (runnable, status, error) => {
    const file = runnable.file || (runnable.parent && runnable.parent.file) || '';
    if (!files.has(file)) files.set(file, []);
    const path = titles(runnable);
    files.get(file).push({
      ancestorTitles: path.slice(0, -1),
      title: path[path.length - 1] || '',
      status,
      failureMessages: error ? [String((error && error.stack) || error)] : [],
    });
    counts[status] += 1;
  };
  runner.on('pass', (test) => add(test, 'passed'));
  runner.on('pending', (test) => add(test, 'pending'));
  runner.on('fail', (test, error) => {
    add(test, 'failed', error);
    console.log(`  failed: ${titles(test).join(' > ')}: ${error && error.message}`);
  });
  runner.once('end', () => {
    const testResults = [...files].map(([name, assertionResults]) => ({
      name,
      status: assertionResults.some((a) => a.status === 'failed') ? 'failed' : 'passed',
      message: '',
      assertionResults,
    }));
    if (output) writeAll(output, JSON.stringify({ testResults }));
    console.log(`${counts.passed} passing, ${counts.failed} failing, ${counts.pending} pending`);
  });
}

module.exports = PrchainReporter;
