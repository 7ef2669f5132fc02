// The bench mock's fixed Gemini and Bedrock answers, written as files under DIR for nginx to
// serve (node bench/provider_answers.mjs DIR): the same text, twelve stream pieces and usage as
// the mock's OpenAI and Anthropic answers (mock.conf.in), in each provider's documented wire.
//   DIR/v1beta/models/gemini-bench:generateContent        a GenerateContentResponse
//   DIR/v1beta/models/gemini-bench:streamGenerateContent  its SSE stream (alt=sse), usage cumulative
//   DIR/model/bedrock-bench/converse                      a Converse answer
//   DIR/model/bedrock-bench/converse-stream               ConverseStream's binary event stream
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const dir = process.argv[2];
if (!dir) throw new Error('usage: provider_answers.mjs DIR');

const TEXT = 'Hi, and thanks for reaching out! Good news: the Summit Trail GTX boots are within the 60-day window for footwear, and wearing them indoors to break them in is fine.\n\n- **Exchange:** I can swap them for size 43.5 or 44. Reply with the size you prefer and I will reserve it right away.\n- **Refund instead:** if your size is out of stock, you get a full refund to your original payment method within 5 to 7 business days after our warehouse inspects the parcel.\n- **Return label:** exchanges ship with a free prepaid label; the dented box is not a problem.\n- **Timing:** with express shipping on the replacement (12 EUR, 1 to 2 business days) you should have the new pair well before the 14th.\n\nShall I go ahead with the exchange?';
const PIECES = ['Hi, and thanks', ' for reaching out!', ' The boots are within', ' the 60-day window,', ' so an exchange',
  ' is no problem.', ' Reply with', ' the size you', ' prefer and I', ' will reserve', ' it right', ' away.'];
const PROMPT = 421;

function write(rel, data) {
  const file = path.join(dir, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
  fs.writeFileSync(file, data, { mode: 0o644 });
}

// Gemini: the whole answer, and a stream whose every event repeats the usage so far.
const geminiUsage = (out) => ({ promptTokenCount: PROMPT, candidatesTokenCount: out, totalTokenCount: PROMPT + out });
write('v1beta/models/gemini-bench:generateContent', JSON.stringify({
  candidates: [{ content: { parts: [{ text: TEXT }], role: 'model' }, finishReason: 'STOP', index: 0 }],
  usageMetadata: geminiUsage(168),
  modelVersion: 'gemini-2.5-flash',
  responseId: 'mXr2aL-bench-4kQpT9',
}));
write('v1beta/models/gemini-bench:streamGenerateContent', PIECES.map((text, i) => {
  const last = i === PIECES.length - 1;
  const event = {
    candidates: [{ content: { parts: [{ text }], role: 'model' }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 }],
    usageMetadata: geminiUsage(2 * (i + 1)),
    modelVersion: 'gemini-2.5-flash',
    responseId: 'mXr2aL-bench-8sWdN2',
  };
  return `data: ${JSON.stringify(event)}\r\n\r\n`;
}).join(''));

// Bedrock: the Converse answer, and ConverseStream's messages in AWS's event stream framing.
write('model/bedrock-bench/converse', JSON.stringify({
  output: { message: { role: 'assistant', content: [{ text: TEXT }] } },
  stopReason: 'end_turn',
  usage: { inputTokens: PROMPT, outputTokens: 168, totalTokens: PROMPT + 168 },
  metrics: { latencyMs: 412 },
}));
function frame(type, payload) {
  const headers = [[':event-type', type], [':content-type', 'application/json'], [':message-type', 'event']];
  const h = Buffer.concat(headers.map(([name, value]) => {
    const v = Buffer.from(value);
    const len = Buffer.alloc(2);
    len.writeUInt16BE(v.length);
    return Buffer.concat([Buffer.from([name.length]), Buffer.from(name), Buffer.from([7]), len, v]);
  }));
  const body = Buffer.from(JSON.stringify(payload));
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(12 + h.length + body.length + 4, 0);
  prelude.writeUInt32BE(h.length, 4);
  prelude.writeUInt32BE(zlib.crc32(prelude.subarray(0, 8)), 8);
  const message = Buffer.concat([prelude, h, body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(message));
  return Buffer.concat([message, crc]);
}
write('model/bedrock-bench/converse-stream', Buffer.concat([
  frame('messageStart', { role: 'assistant' }),
  ...PIECES.map((text) => frame('contentBlockDelta', { delta: { text }, contentBlockIndex: 0 })),
  frame('contentBlockStop', { contentBlockIndex: 0 }),
  frame('messageStop', { stopReason: 'end_turn' }),
  frame('metadata', { usage: { inputTokens: PROMPT, outputTokens: 24, totalTokens: PROMPT + 24 }, metrics: { latencyMs: 87 } }),
]));
