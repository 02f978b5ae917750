// BERT's word pieces from a tokenizer.json, as the tokenizers library makes them for MiniLM.
//
// Mirrors the tokenizer of src/raglab/embedding/neural/model.py (Hugging Face's BertNormalizer,
// BertPreTokenizer and WordPiece model, with the model's own truncation and no padding):
//   1. clean: drop U+0000, U+FFFD and every "other" character (Unicode C*, but not \t \n \r);
//      every White_Space character becomes a space;
//   2. CJK ideographs (the blocks BERT lists) get a space either side;
//   3. accents stripped (NFD, then every Mn dropped) and lower-cased, as the file's normalizer
//      says (strip_accents null follows lowercase);
//   4. words: split on white space (dropped) and on punctuation (each mark its own word): ASCII
//      punctuation (symbols such as $ + < = > ^ ` | ~ included) and Unicode's P*;
//   5. each word, longest match first from the vocabulary, continuations prefixed "##"; a word
//      with a piece not in it, or over 100 characters, is one [UNK];
//   6. [CLS] first, [SEP] last, at most maxLength ids in all (the pieces past it dropped).
// Characters are code points throughout. Node's and the Rust library's Unicode versions may
// differ: a character assigned in only one of them can tokenise differently.

const CHINESE = [
  [0x4e00, 0x9fff],
  [0x3400, 0x4dbf],
  [0x20000, 0x2a6df],
  [0x2a700, 0x2b73f],
  [0x2b740, 0x2b81f],
  [0x2b920, 0x2ceaf],
  [0xf900, 0xfaff],
  [0x2f800, 0x2fa1f],
];
const OTHER = /^\p{C}$/u;
const SPACE = /^\p{White_Space}$/u;
const NONSPACING = /\p{Mn}/gu;
const PUNCTUATION = /^(?:[!-/:-@[-`{-~]|\p{P})$/u;

function isChinese(cp) {
  for (const [lo, hi] of CHINESE) if (cp >= lo && cp <= hi) return true;
  return false;
}

/** The text as BertNormalizer leaves it (steps 1-3 above). */
export function normalize(text) {
  let out = "";
  for (const ch of text) {
    const cp = ch.codePointAt(0);
    if (ch === "\t" || ch === "\n" || ch === "\r") out += " ";
    else if (cp === 0 || cp === 0xfffd || OTHER.test(ch)) continue;
    else if (SPACE.test(ch)) out += " ";
    else if (isChinese(cp)) out += ` ${ch} `;
    else out += ch;
  }
  return out.normalize("NFD").replace(NONSPACING, "").toLowerCase();
}

/** The words BertPreTokenizer cuts a normalised text into (step 4). */
export function words(text) {
  const out = [];
  let word = "";
  for (const ch of text) {
    if (SPACE.test(ch)) {
      if (word) out.push(word);
      word = "";
    } else if (PUNCTUATION.test(ch)) {
      if (word) out.push(word);
      out.push(ch);
      word = "";
    } else {
      word += ch;
    }
  }
  if (word) out.push(word);
  return out;
}

/** A tokenizer from a parsed tokenizer.json (a WordPiece model) with at most `maxLength` ids per
 * text ([CLS] and [SEP] included; the model's max_seq_length, 256 for all-MiniLM-L6-v2).
 * `ids(text)` gives the word-piece ids; `pieces(text)` the pieces, without [CLS] and [SEP]. */
export function wordPieceTokenizer(tokenizerJson, maxLength) {
  const model = tokenizerJson.model;
  if (!model || model.type !== "WordPiece") throw new Error("tokenizer.json: model is not WordPiece");
  if (!(Number.isInteger(maxLength) && maxLength >= 2)) throw new Error(`maxLength must be an integer >= 2, got ${maxLength}`);
  const vocab = new Map(Object.entries(model.vocab));
  const prefix = model.continuing_subword_prefix ?? "##";
  const longest = model.max_input_chars_per_word ?? 100;
  const unk = model.unk_token ?? "[UNK]";
  const id = (token) => {
    const found = vocab.get(token);
    if (found === undefined) throw new Error(`tokenizer.json: ${token} is not in the vocabulary`);
    return found;
  };
  const [cls, sep, unkId] = [id("[CLS]"), id("[SEP]"), id(unk)];

  function split(word) {
    const chars = Array.from(word);
    if (chars.length > longest) return [unk];
    const out = [];
    for (let start = 0; start < chars.length; ) {
      let end = chars.length;
      let piece = null;
      for (; end > start; end--) {
        const candidate = (start > 0 ? prefix : "") + chars.slice(start, end).join("");
        if (vocab.has(candidate)) {
          piece = candidate;
          break;
        }
      }
      if (piece === null) return [unk];
      out.push(piece);
      start = end;
    }
    return out;
  }

  function pieces(text) {
    return words(normalize(text)).flatMap(split);
  }

  function ids(text) {
    const inner = pieces(text).slice(0, maxLength - 2);
    return [cls, ...inner.map((p) => (p === unk ? unkId : vocab.get(p))), sep];
  }

  return { ids, pieces, maxLength };
}
