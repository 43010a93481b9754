/**
 * GetData's JSON answer read while it arrives, one row at a time.
 *
 * A large answer is streamed by the gateway (docs/api.md, GetData): its head,
 * [{"status":"success","columns":[...],"data":[, comes first, then the rows,
 * then "row_count" and "truncated". The reader is fed the text as it is
 * received and calls onColumns once and onRow for each row as soon as the row
 * is complete, so the table shows the first rows while the rest still comes.
 * Rows are handed on, never kept here: memory is what the table keeps. A json
 * or array value keeps the text it was sent as, beside its parsed form, so the
 * table shows what the database wrote, as the CSV download does.
 *
 * Why not NDJSON, which is simpler to split: its lines carry no column types,
 * and the table shows them. Why not JSON.parse per row: it rounds bigints and
 * cannot tell a column named __proto__ from the prototype (values.js).
 *
 * It is a complete JSON parser that stops where its text ends and goes on when
 * more comes; an answer that ends before its end (the gateway cut it, or the
 * connection dropped) is an IncompleteAnswer at end(), never a short table
 * taken for the whole one.
 */
import { Num, Structured } from './values.js';

/** The answer's text ended before its end: the rows received are not the whole answer. */
export class IncompleteAnswer extends Error {}

// A number is read as the run of characters a number may hold, then checked: "0." may be "0.5" in the next piece.
const NUMBER_RUN = /[-+0-9.eE]+/y;
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$/;
const LITERALS = { t: ['true', true], f: ['false', false], n: ['null', null] };
const SPACE = /[ \t\r\n]*/y;

// What the parser expects next.
const VALUE = 0, VALUE_OR_CLOSE = 1, KEY_OR_CLOSE = 2, KEY = 3, COLON = 4, COMMA_OR_CLOSE = 5, DONE = 6;

export class AnswerReader {
  /**
   * @param {{onColumns: function(Array<{name: string, type: string}>), onRow: function(Array)}} handlers
   *   GetData's answer: columns and rows handed on as they come. Without handlers, any JSON (parseExact).
   */
  constructor({ onColumns = null, onRow = null } = {}) {
    this.onColumns = onColumns;
    this.onRow = onRow;
    this.plain = onRow === null;
    this.text = '';
    this.at = 0;
    this.expect = VALUE;
    this.stack = []; // open containers: {value: Array|Map, key: pending key, rows: whether it is "data"}
    this.root = undefined;
    this.columns = null;
    this.rowsSeen = 0;
    this.stringScan = 0; // how far an unfinished string was already scanned, so it is not scanned again
    this.keepFrom = null; // where a row's json or array value begins, while it is open
  }

  /** Feed the next piece of the answer's text. */
  push(piece) {
    // What was read is dropped, except the text of a json or array value still open in a row (kept whole).
    const cut = this.keepFrom === null ? this.at : Math.min(this.at, this.keepFrom);
    this.text = this.text.slice(cut) + piece;
    this.stringScan = Math.max(0, this.stringScan - cut);
    this.at -= cut;
    if (this.keepFrom !== null) {
      this.keepFrom -= cut;
      this.stack[4].start -= cut;
    }
    while (this.step(false)) { /* each step consumes one token */ }
  }

  /** The text is all there: the answer's counts, or IncompleteAnswer. */
  end() {
    while (this.step(true)) { /* a number at the very end completes only now */ }
    SPACE.lastIndex = this.at;
    SPACE.exec(this.text);
    if (this.expect !== DONE || SPACE.lastIndex !== this.text.length) {
      throw new IncompleteAnswer(`the answer ended before its end, after ${this.rowsSeen} rows`);
    }
    if (this.plain) return this.root;
    const answer = Array.isArray(this.root) && this.root.length === 1 ? this.root[0] : null;
    const rowCount = answer instanceof Map ? answer.get('row_count') : undefined;
    if (!(rowCount instanceof Num) || typeof answer.get('truncated') !== 'boolean' || this.columns === null) {
      throw new IncompleteAnswer('the answer is not the shape GetData answers');
    }
    return { rowCount: Number(rowCount.text), truncated: answer.get('truncated'), rowsSeen: this.rowsSeen };
  }

  /** Consume one token if the text holds all of it; false when more text is needed (or at the end). */
  step(final) {
    SPACE.lastIndex = this.at;
    SPACE.exec(this.text);
    const at = SPACE.lastIndex;
    if (at >= this.text.length || this.expect === DONE) return false;
    const char = this.text[at];
    const top = this.stack[this.stack.length - 1];
    switch (this.expect) {
      case VALUE_OR_CLOSE:
      case VALUE:
        if (char === ']' && this.expect === VALUE_OR_CLOSE) return this.close(at, top);
        return this.value(at, char, final);
      case KEY_OR_CLOSE:
        if (char === '}') return this.close(at, top);
      // falls through: a key
      case KEY: {
        if (char !== '"') return this.fail(at);
        const end = this.stringEnd(at);
        if (end < 0) return false;
        top.key = JSON.parse(this.text.slice(at, end));
        this.at = end;
        this.expect = COLON;
        return true;
      }
      case COLON:
        if (char !== ':') return this.fail(at);
        this.at = at + 1;
        this.expect = VALUE;
        return true;
      case COMMA_OR_CLOSE:
        if (char === ',') {
          this.at = at + 1;
          this.expect = top.value instanceof Map ? KEY : VALUE;
          return true;
        }
        if (char === (top.value instanceof Map ? '}' : ']')) return this.close(at, top);
        return this.fail(at);
    }
    return false;
  }

  value(at, char, final) {
    if (char === '{' || char === '[') {
      const parent = this.stack[this.stack.length - 1];
      // The rows are the array under "data" in the answer's one object; they are handed on, not kept.
      const rows = !this.plain && char === '[' && this.stack.length === 2 && parent.key === 'data';
      const frame = { value: char === '{' ? new Map() : [], key: null, rows };
      if (!this.plain && this.stack.length === 4 && this.stack[2].rows) {
        // A json or array value of a row: its text is kept to show as written (the database's json layout).
        frame.start = at;
        this.keepFrom = at;
      }
      this.stack.push(frame);
      this.at = at + 1;
      this.expect = char === '{' ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
      return true;
    }
    if (char === '"') {
      const end = this.stringEnd(at);
      if (end < 0) return false;
      this.at = end;
      return this.complete(JSON.parse(this.text.slice(at, end)));
    }
    const literal = LITERALS[char];
    if (literal) {
      const [word, parsed] = literal;
      if (this.text.length - at < word.length) return final ? this.fail(at) : false;
      if (!this.text.startsWith(word, at)) return this.fail(at);
      this.at = at + word.length;
      return this.complete(parsed);
    }
    NUMBER_RUN.lastIndex = at;
    const run = NUMBER_RUN.exec(this.text);
    if (run === null) return this.fail(at);
    // A number that reaches the end of the text may go on in the next piece.
    if (NUMBER_RUN.lastIndex === this.text.length && !final) return false;
    if (!NUMBER.test(run[0])) return this.fail(at);
    this.at = NUMBER_RUN.lastIndex;
    return this.complete(new Num(run[0]));
  }

  close(at, top) {
    this.stack.pop();
    this.at = at + 1;
    if (top.start !== undefined) {
      this.keepFrom = null;
      return this.complete(new Structured(this.text.slice(top.start, at + 1), top.value));
    }
    return this.complete(top.rows ? null : top.value);
  }

  complete(value) {
    const parent = this.stack[this.stack.length - 1];
    if (parent === undefined) {
      this.root = value;
      this.expect = DONE;
      return true;
    }
    if (parent.rows) {
      this.rowsSeen += 1;
      this.onRow(this.rowValues(value));
    } else if (parent.value instanceof Map) {
      parent.value.set(parent.key, value);
      if (!this.plain && this.stack.length === 2 && parent.key === 'columns') this.announceColumns(value);
    } else {
      parent.value.push(value);
    }
    this.expect = COMMA_OR_CLOSE;
    return true;
  }

  announceColumns(value) {
    this.columns = value.map((column) => ({ name: column.get('name'), type: column.get('type') }));
    this.onColumns(this.columns);
  }

  /** A row object as the list of its values in column order (its keys are the columns' names). */
  rowValues(row) {
    if (!(row instanceof Map) || this.columns === null) throw new IncompleteAnswer('a row came before its columns');
    return this.columns.map((column) => (row.has(column.name) ? row.get(column.name) : null));
  }

  /** Where the string starting at `at` ends (just past its quote), or -1 when the text ends first. */
  stringEnd(at) {
    let index = Math.max(at + 1, this.stringScan);
    const text = this.text;
    while (index < text.length) {
      const char = text.charCodeAt(index);
      if (char === 92) index += 2; // a backslash escapes the next character
      else if (char === 34) {
        this.stringScan = 0;
        return index + 1;
      } else index += 1;
    }
    // Resume past what was scanned, but never inside an escape that the next piece completes.
    this.stringScan = text[text.length - 1] === '\\' ? at + 1 : Math.min(index, text.length);
    return -1;
  }

  fail(at) {
    throw new IncompleteAnswer(`the answer is not JSON at character ${at}`);
  }
}

/** Any JSON text parsed as the console holds values: numbers as Num, objects as Maps (keys in their order). */
export function parseExact(text) {
  const reader = new AnswerReader();
  reader.push(text);
  return reader.end();
}
