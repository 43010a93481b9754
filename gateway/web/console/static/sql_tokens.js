/**
 * SQL split into tokens for highlighting: PostgreSQL's lexical rules, as far as colour needs them.
 *
 * Every character of the text lands in exactly one token, so joining the
 * tokens' text gives the text back (the editor draws the tokens under the
 * textarea and they must line up). Strings, quoted identifiers and comments
 * follow PostgreSQL: '' inside a string, E'\'' escapes, $tag$ dollar quotes,
 * "" inside an identifier, nested block comments. Text that is not closed yet
 * runs to the end, as the server would read it.
 */

/** Words shown as keywords; also quoted when the console writes a table's name into a query. */
export const KEYWORDS = new Set(`
all and any array as asc between both by case cast collate cross current_date current_time current_timestamp
default desc distinct else end except exists false fetch filter first following for from full group having ilike
in inner intersect interval is join lateral leading left like limit natural not null nulls offset on only or
order outer over partition preceding range recursive right row rows select similar some symmetric table then
ties to trailing true unbounded union unique using values when where window with within
`.trim().split(/\s+/));

const RULES = [
  ['space', /\s+/y],
  ['comment', /--[^\n]*/y],
  ['comment', null], // block comments nest, so they are read by blockComment()
  ['string', /[eE]'(?:[^'\\]|\\[\s\S]|'')*(?:'|$)/y],
  ['string', /(?:[bBxXnN]|[uU]&)?'(?:[^']|'')*(?:'|$)/y],
  ['string', null], // dollar quotes: the closing tag must repeat the opening one
  ['identifier', /(?:[uU]&)?"(?:[^"]|"")*(?:"|$)/y],
  ['parameter', /\$[0-9]+/y],
  ['number', /(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)?/y],
  ['word', /[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/y],
  ['operator', /[-+*/<>=~!@#%^&|`?:]+|::/y],
  ['punctuation', /[(),;[\].]/y],
];

const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;

/** The length of a (nested) block comment at `at`, or 0. */
function blockComment(text, at) {
  if (!text.startsWith('/*', at)) return 0;
  let depth = 0;
  let index = at;
  while (index < text.length) {
    if (text.startsWith('/*', index)) {
      depth += 1;
      index += 2;
    } else if (text.startsWith('*/', index)) {
      depth -= 1;
      index += 2;
      if (depth === 0) return index - at;
    } else index += 1;
  }
  return text.length - at;
}

/** The length of a dollar-quoted string at `at`, or 0. */
function dollarString(text, at) {
  DOLLAR_TAG.lastIndex = at;
  const tag = DOLLAR_TAG.exec(text);
  if (tag === null) return 0;
  const close = text.indexOf(tag[0], at + tag[0].length);
  return (close < 0 ? text.length : close + tag[0].length) - at;
}

/** The tokens of `text`: [{type, text}], types space, comment, string, identifier, parameter, number,
 *  keyword, function, word, operator, punctuation, other. */
export function tokenize(text) {
  const tokens = [];
  let at = 0;
  while (at < text.length) {
    let type = 'other';
    let length = 0;
    for (const [ruleType, pattern] of RULES) {
      if (pattern === null) {
        length = ruleType === 'comment' ? blockComment(text, at) : dollarString(text, at);
      } else {
        pattern.lastIndex = at;
        length = pattern.exec(text) === null ? 0 : pattern.lastIndex - at;
      }
      if (length > 0) {
        type = ruleType;
        break;
      }
    }
    if (length === 0) length = 1; // a character no rule reads stands alone
    const piece = text.slice(at, at + length);
    if (type === 'word') type = wordType(piece, text, at + length);
    tokens.push({ type, text: piece });
    at += length;
  }
  return tokens;
}

/** A word is a keyword, a function (followed by a parenthesis) or a name. */
function wordType(word, text, after) {
  if (KEYWORDS.has(word.toLowerCase())) return 'keyword';
  return /^\s*\(/.test(text.slice(after, after + 64)) ? 'function' : 'word';
}

/** A name as SQL must write it: bare when it is a plain lower-case word, else in double quotes. */
export function quoteIdentifier(name) {
  if (/^[a-z_][a-z0-9_]*$/.test(name) && !KEYWORDS.has(name)) return name;
  return '"' + name.replace(/"/g, '""') + '"';
}
