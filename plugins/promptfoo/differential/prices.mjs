// Writes promptfoo's own OpenAI price table (input and output US dollars
// per token, by model id) to host/src/formats/promptfoo/openai_prices.json,
// which assay's promptfoo openai provider prices `cost` assertions with.
// Re-run after a promptfoo upgrade (the chunk's name changes with it):
//   npm install --prefix ~/.cache/assay/promptfoo-0.123.1 promptfoo@0.123.1
//   node plugins/promptfoo/differential/prices.mjs ~/.cache/assay/promptfoo-0.123.1/node_modules/promptfoo
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = process.argv[2];
const dist = join(root, 'dist', 'src');
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
// The chunk that exports OPENAI_BILLING_MODELS (minified as another name).
const chunk = readdirSync(dist).find(
  (name) => name.endsWith('.js') && readFileSync(join(dist, name), 'utf8').includes('OPENAI_BILLING_MODELS as '),
);
const source = readFileSync(join(dist, chunk), 'utf8');
const exported = source.match(/OPENAI_BILLING_MODELS as (\w+)/)[1];
const models = (await import(join(dist, chunk)))[exported];
const prices = models
  .filter((m) => m.cost && typeof m.cost.input === 'number' && typeof m.cost.output === 'number')
  .map((m) => [m.id, m.cost.input, m.cost.output]);
const out = { promptfoo: version, prices };
writeFileSync('host/src/formats/promptfoo/openai_prices.json', JSON.stringify(out, null, 0) + '\n');
console.log(`${prices.length} models from promptfoo ${version}`);
