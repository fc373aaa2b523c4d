// prchain's reporter for `node --test` (Node >= 18.15): a jest-style JSON report (testResults →
// assertionResults) with each test's file and enclosing describe blocks, which the junit reporter
// leaves out. A file that fails to load is reported under its own path with no tests.
export default async function* prchainReporter(source) {
  const stacks = new Map();
  const files = new Map();
  const entry = (file) => {
    if (!files.has(file)) files.set(file, { name: file, status: 'passed', message: '', assertionResults: [] });
    return files.get(file);
  };
  for await (const { type, data } of source) {
    const file = data && data.file ? data.file : '';
    if (type === 'test:start') {
      const stack = (stacks.get(file) || []).slice(0, data.nesting);
      stack[data.nesting] = data.name;
      stacks.set(file, stack);
      continue;
    }
    if (type !== 'test:pass' && type !== 'test:fail') continue;
    if (data.details && data.details.type === 'suite') continue;
    const error = type === 'test:fail' && data.details ? data.details.error : undefined;
    // The file's own entry (a file that did not load): its absolute path, or (Node >= 22) relative.
    if (data.nesting === 0 && (data.name === file || file.endsWith(`/${data.name}`))) {
      if (type === 'test:fail') Object.assign(entry(file), { status: 'failed', message: String(error && (error.cause || error.message) || 'failed to load') });
      continue;
    }
    const status = data.skip || data.todo ? 'pending' : type === 'test:pass' ? 'passed' : 'failed';
    const found = entry(file);
    if (status === 'failed') found.status = 'failed';
    found.assertionResults.push({
      ancestorTitles: (stacks.get(file) || []).slice(0, data.nesting),
      title: data.name,
      status,
      failureMessages: error ? [String(error.cause || error.message || error)] : [],
    });
  }
  yield JSON.stringify({ testResults: [...files.values()] });
}
