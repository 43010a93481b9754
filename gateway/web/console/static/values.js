/**
 * Values as the console holds them, read from the gateway's JSON without loss.
 *
 * JSON.parse would turn a bigint such as 9007199254740993 into 9007199254740992
 * and a Map-less object could not hold a column named "__proto__", so the
 * console's own reader (json_stream.js) keeps every number as the text the
 * gateway wrote (a Num) and every object as a Map. This module turns such a
 * value back into the text the table shows, which is what CSV would say.
 */

/** A JSON number, kept as the gateway wrote it. */
export class Num {
  constructor(text) {
    this.text = text;
  }
}

/** A json or array value of a row: the text the gateway sent, and that text parsed (Maps, arrays, Nums). */
export class Structured {
  constructor(text, value) {
    this.text = text;
    this.value = value;
  }
}

/** The value as one line of text: strings as they are, numbers as written, structures as compact JSON. */
export function textOf(value) {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (value instanceof Num || value instanceof Structured) return value.text;
  if (typeof value === 'boolean') return String(value);
  return jsonText(value, '', '');
}

/** The value for the whole-value view: structures indented, so a large json value can be read. */
export function wholeTextOf(value) {
  if (value instanceof Structured) return jsonText(value.value, '\n', '  ');
  if (value instanceof Map || Array.isArray(value)) return jsonText(value, '\n', '  ');
  return textOf(value);
}

/** JSON text of a parsed value; strings escaped by JSON.stringify, which only ever yields text. */
function jsonText(value, newline, indent, depth = 0) {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (value instanceof Num) return value.text;
  if (typeof value === 'boolean') return String(value);
  const inner = newline + indent.repeat(depth + 1);
  const outer = newline + indent.repeat(depth);
  const colon = indent ? ': ' : ':';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return '[' + value.map((item) => inner + jsonText(item, newline, indent, depth + 1)).join(',') + outer + ']';
  }
  if (value.size === 0) return '{}';
  const members = [];
  for (const [key, item] of value) {
    members.push(inner + JSON.stringify(key) + colon + jsonText(item, newline, indent, depth + 1));
  }
  return '{' + members.join(',') + outer + '}';
}

const NUMERIC_TYPES = new Set([
  'smallint', 'integer', 'bigint', 'oid', 'numeric', 'real', 'double precision', 'money',
]);

/** Whether a column of this type (PostgreSQL's format_type) holds numbers, to be aligned on the right. */
export function isNumericType(type) {
  return NUMERIC_TYPES.has(type) || /^numeric\(/.test(type);
}
