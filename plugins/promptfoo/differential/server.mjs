// The deterministic OpenAI-compatible server the differential test grades
// against: promptfoo's judge and embeddings here, assay's in the Rust test
// (`host/tests/integration/promptfoo_differential.rs` ports these rules).
//
// Chat completions: the request's message contents, joined by a blank line,
// are searched for `REPLY<<`; the answer is the text from there to the next
// `>>` (the whole rest when there is none), or `NO REPLY` without a marker.
// Embeddings: for each input, 27 integers: how often each letter a-z occurs
// (ASCII, any case), then how many other non-space characters there are.
import http from 'node:http';

export function answer(content) {
  const start = content.indexOf('REPLY<<');
  if (start < 0) return 'NO REPLY';
  const rest = content.slice(start + 'REPLY<<'.length);
  const end = rest.indexOf('>>');
  return end < 0 ? rest : rest.slice(0, end);
}

export function embed(text) {
  const vector = new Array(27).fill(0);
  for (const c of text) {
    if (/^[a-zA-Z]$/.test(c)) vector[c.toLowerCase().charCodeAt(0) - 97] += 1;
    else if (!/\s/.test(c)) vector[26] += 1;
  }
  return vector;
}

function contentOf(messages) {
  return messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n\n');
}

export function start(port = 0) {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const request = JSON.parse(body || '{}');
      let reply;
      if (req.url.endsWith('/embeddings')) {
        const inputs = Array.isArray(request.input) ? request.input : [request.input];
        reply = {
          object: 'list',
          data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: embed(text) })),
          model: request.model,
          usage: { prompt_tokens: 1, total_tokens: 1 },
        };
      } else {
        reply = {
          id: 'chatcmpl-differential',
          object: 'chat.completion',
          created: 0,
          model: request.model,
          choices: [{ index: 0, message: { role: 'assistant', content: answer(contentOf(request.messages || [])) }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        };
      }
      const text = JSON.stringify(reply);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await start(Number(process.argv[2] || 0));
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
}
