// Runs a promptfoo config through promptfoo's own library (its CLI needs
// Node >= 22; the library runs on the Node 20 installed here) and writes
// promptfoo's output file, for comparing with `assay run CONFIG -o FILE`:
//
//   NODE_PATH=~/.cache/assay/promptfoo-0.123.1/node_modules \
//     node benches/promptfoo_eval.mjs CONFIG.yaml OUT.json
//
// The echo provider needs no network. Telemetry and update checks are off.
import fs from 'node:fs';
import path from 'node:path';

process.env.PROMPTFOO_DISABLE_TELEMETRY = '1';
process.env.PROMPTFOO_DISABLE_UPDATE = '1';
process.env.PROMPTFOO_CONFIG_DIR ??= fs.mkdtempSync('/tmp/promptfoo-');
const [config, out] = process.argv.slice(2);
if (!config || !out) throw new Error('usage: node promptfoo_eval.mjs CONFIG.yaml OUT.json');
const modules = process.env.NODE_PATH;
if (!modules) throw new Error('set NODE_PATH to the node_modules promptfoo is installed in');
const promptfoo = (await import(path.join(modules, 'promptfoo/dist/src/index.js'))).default;
const yaml = await import(path.join(modules, 'js-yaml/dist/js-yaml.mjs'));
const outPath = path.resolve(out);
process.chdir(path.dirname(path.resolve(config)));
const suite = yaml.load(fs.readFileSync(path.basename(config), 'utf8'));
const started = performance.now();
const result = await promptfoo.evaluate(suite, { maxConcurrency: 16, cache: false, writeLatestResults: false });
const summary = await result.toEvaluateSummary();
fs.writeFileSync(outPath, JSON.stringify({ results: summary }, null, 1));
const seconds = ((performance.now() - started) / 1000).toFixed(2);
console.log(`promptfoo: ${summary.results.length} results in ${seconds} s: ${JSON.stringify(summary.stats)}`);
