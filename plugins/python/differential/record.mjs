// Records promptfoo's own verdicts of `python` assertions, through its
// exported `assertions.runAssertion` (which runs the host's python3), for
// the differential test `promptfoo_python::the_runner_agrees_with_promptfoo`.
//
// Run from the repository root:
//   npm install --prefix ~/.cache/assay/promptfoo-0.123.1 promptfoo@0.123.1
//   PROMPTFOO_PYTHON=python3 NODE_PATH=~/.cache/assay/promptfoo-0.123.1/node_modules \
//     node plugins/python/differential/record.mjs
// which writes ./recorded.jsonl (a header line, then one line per case:
// type, output, value, threshold, and promptfoo's pass, score and reason).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

process.env.PROMPTFOO_CACHE_ENABLED = 'false';
process.env.PROMPTFOO_DISABLE_TELEMETRY = '1';
process.env.PROMPTFOO_DISABLE_UPDATE = '1';

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = (process.env.NODE_PATH || '').split(':')[0];
if (!modules) throw new Error('set NODE_PATH to the node_modules promptfoo is installed in');
const promptfooDir = path.join(modules, 'promptfoo');
const { version } = JSON.parse(fs.readFileSync(path.join(promptfooDir, 'package.json'), 'utf8'));
const { assertions } = (await import(path.join(promptfooDir, 'dist/src/index.js'))).default;

const COMMAND =
  'PROMPTFOO_PYTHON=python3 NODE_PATH=~/.cache/assay/promptfoo-0.123.1/node_modules node plugins/python/differential/record.mjs';

// [type, output, value, threshold]: `file://checks.py…` values name the
// file beside this script.
const cases = [
  ['python', 'hello world', "output.startswith('hello')"],
  ['python', 'hello world', "output.startswith('bye')"],
  ['not-python', 'hello world', "output.startswith('hello')"],
  ['not-python', 'hello world', "output.startswith('bye')"],
  ['python', 'hello', 'len(output) / 10'],
  ['python', 'hello', 'len(output) / 10', 0.6],
  ['not-python', 'hello', 'len(output) / 10', 0.6],
  ['python', 'hello', '0'],
  ['python', 'hello', '-1'],
  ['python', 'hello', "'true'"],
  ['python', 'hello', "'0.25'"],
  ['python', 'hello', "'nope'"],
  ['python', 'hello', 'None'],
  ['python', 'hello', "{'pass': True, 'score': 0.4, 'reason': 'fine'}"],
  ['python', 'hello', "{'pass': True, 'score': 0.4, 'reason': 'fine'}", 0.5],
  ['not-python', 'hello', "{'pass': True, 'score': 0.4, 'reason': 'fine'}"],
  ['not-python', 'hello', "{'pass': False, 'score': 0.1, 'reason': 'bad'}"],
  ['python', 'hello', "{'pass_': False, 'score': 0, 'reason': 'snake'}"],
  ['python', 'hello', "json.dumps({'pass': True, 'score': 1, 'reason': 'text'})"],
  ['python', 'hello', "{'pass': True, 'score': 1}"],
  ['python', 'hello', '[1, 2]'],
  ['python', 'hello', '1 / 0'],
  ['not-python', 'hello', '1 / 0'],
  ['python', 'hello', 'undefined_name'],
  ['python', 'two words', "n = len(output.split())\nif n == 2:\n    return {'pass': True, 'score': 1, 'reason': f'{n} words'}\nreturn False"],
  ['python', 'two words', "  x = output.upper()\n  return x == 'TWO WORDS'"],
  ['python', 'hello', 'file://checks.py'],
  ['python', 'hello world, again', 'file://checks.py', 0.5],
  ['python', 'LOUD', 'file://checks.py:shout'],
  ['not-python', 'quiet', 'file://checks.py:shout'],
  ['python', 'hello', 'file://checks.py:broken'],
  ['python', 'hello', 'file://checks.py:missing'],
];

const lines = [JSON.stringify({ promptfoo: version, command: COMMAND })];
for (const [type, output, value, threshold] of cases) {
  const assertion = { type, value: value.startsWith('file://') ? `file://${path.join(here, value.slice(7))}` : value };
  if (threshold !== undefined) assertion.threshold = threshold;
  const result = await assertions.runAssertion({
    prompt: output,
    assertion,
    test: { vars: {}, assert: [assertion] },
    providerResponse: { output },
  });
  lines.push(
    JSON.stringify({ type, output, value, threshold, pass: result.pass, score: result.score, reason: result.reason }),
  );
}
fs.writeFileSync(path.join(here, 'recorded.jsonl'), `${lines.join('\n')}\n`);
console.log(`recorded ${cases.length} cases from promptfoo ${version}`);
