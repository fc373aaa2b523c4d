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

// The test file of a test: its own, else its nearest suite's that has one.
function fileOf(runnable) {
  for (let node = runnable; node; node = node.parent) if (node.file) return node.file;
  return '';
}

// mocha before 3 keeps no file on its suites and tests (eslint's mocha 1.13 of 2014: every id
// lacked its file). Such a mocha loads its files after it required this reporter, announcing each
// on the root suite ('pre-require', 'post-require'): what a file added to the root suite gets its
// path then. The mocha is the one whose command runs (`require.main`, its bin/_mocha); a program
// that runs mocha itself is left alone (its '../' could be the project's own module).
function markFiles() {
  const main = require.main && require.main.filename;
  if (!main || !/[\\/]mocha[\\/]bin[\\/][^\\/]+$/.test(main)) return;
  let Mocha;
  try {
    Mocha = require.main.require('../');
  } catch (error) {
    return;
  }
  const proto = Mocha && Mocha.prototype;
  if (!proto || typeof proto.loadFiles !== 'function' || proto.prchainFiles) return;
  const load = proto.loadFiles;
  proto.prchainFiles = true;
  proto.loadFiles = function () {
    const root = this.suite;
    let suites = 0;
    let tests = 0;
    root.on('pre-require', () => {
      suites = root.suites.length;
      tests = root.tests.length;
    });
    root.on('post-require', (context, file) => {
      for (const added of root.suites.slice(suites).concat(root.tests.slice(tests))) {
        if (!added.file) added.file = file;
      }
    });
    return load.apply(this, arguments);
  };
}
markFiles();

function PrchainReporter(runner, options) {
  const reporterOptions = (options && (options.reporterOptions || options.reporterOption)) || {};
  const output = reporterOptions.output || process.env.PRCHAIN_NODE_REPORT;
  const files = new Map();
  const counts = { passed: 0, failed: 0, pending: 0 };
  const add = (runnable, status, error) => {
    const file = fileOf(runnable);
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
