#!/bin/sh
# Regenerates the report files of tests/environments/eras/test_node.py with the real runners:
# one project per runner in /tmp/prchain-node-reports/<runner>, the same two test files in each
# (nested describes, a failure, a skip; a file that fails to load). Needs node >= 20 and the npm
# registry. Run from this directory: sh regenerate.sh
set -e
here=$(pwd); reporters=$(cd ../../../environments/eras/node && pwd); root=/tmp/prchain-node-reports
rm -rf $root && mkdir -p $root
cat > $root/sum.js <<'JS'
describe('math', () => {
  describe('add', () => {
    it('adds', () => { assert.strictEqual(1 + 1, 2); });
    it('fails', () => { assert.strictEqual(1 + 1, 3); });
  });
  it.skip('skipped one', () => {});
});
it('top level', () => {});
JS
for runner in jest@29.7.0 vitest@1.6.0 mocha@10.4.0 node; do
  name=${runner%@*}; dir=$root/$name; mkdir -p $dir/test; cd $dir
  case $name in
    vitest) head="import assert from 'assert'; import { describe, it } from 'vitest';";
            echo "import './missing-module.js';" > test/broken.test.js ;;
    node) head="const assert = require('assert'); const { describe, it } = require('node:test');";
          echo "require('./missing-module');" > test/broken.test.js ;;
    *) head="const assert = require('assert');";
       [ $name = jest ] && echo "require('./missing-module');" > test/broken.test.js ;;
  esac
  { echo "$head"; cat $root/sum.js; } > test/sum.test.js
  if [ $name != node ]; then npm init -y >/dev/null && npm i -D $runner --no-audit --no-fund >/dev/null; fi
  case $name in
    jest) node $reporters/jest_json.js $here/jest.json node_modules/.bin/jest > $here/jest.out 2>&1 || true ;;
    vitest) npx vitest run --reporter=default --reporter=json --outputFile=$here/vitest.json > $here/vitest.out 2>&1 || true ;;
    mocha) npx mocha --reporter $reporters/mocha_reporter.js --reporter-options output=$here/mocha.json > $here/mocha.out 2>&1 || true ;;
    node) node --test --test-reporter=spec --test-reporter-destination=stdout \
            --test-reporter=$reporters/node_test_reporter.mjs --test-reporter-destination=$here/node.json > $here/node.out 2>&1 || true ;;
  esac
done
