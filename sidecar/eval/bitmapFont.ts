/**
 * A tiny 5×7 bitmap font of our own for the eval report's pictures: digits, A–Z, a–z, space and
 * . , - + : / ( ) % _ ± ° — ? = ! ' × < > [ ] #. A character the font lacks draws as '?'.
 * Each glyph is 7 rows of 5 cells, '#' lit; glyphs advance by 6 cells (one blank column between them).
 */
import type { Image } from '../io/png.js';
import { fillRectangle, type Rgb } from './raster.js';

export const GLYPH_WIDTH = 5;
export const GLYPH_HEIGHT = 7;
/** horizontal distance from one glyph's left edge to the next's, in cells */
export const GLYPH_ADVANCE = 6;

const GLYPH_ROWS: Record<string, string> = {
  '0': '.###. #...# #..## #.#.# ##..# #...# .###.',
  '1': '..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.',
  '2': '.###. #...# ....# ...#. ..#.. .#... #####',
  '3': '##### ...#. ..#.. ...#. ....# #...# .###.',
  '4': '...#. ..##. .#.#. #..#. ##### ...#. ...#.',
  '5': '##### #.... ####. ....# ....# #...# .###.',
  '6': '..##. .#... #.... ####. #...# #...# .###.',
  '7': '##### ....# ...#. ..#.. .#... .#... .#...',
  '8': '.###. #...# #...# .###. #...# #...# .###.',
  '9': '.###. #...# #...# .#### ....# ...#. .##..',
  A: '.###. #...# #...# ##### #...# #...# #...#',
  B: '####. #...# #...# ####. #...# #...# ####.',
  C: '.###. #...# #.... #.... #.... #...# .###.',
  D: '####. #...# #...# #...# #...# #...# ####.',
  E: '##### #.... #.... ####. #.... #.... #####',
  F: '##### #.... #.... ####. #.... #.... #....',
  G: '.###. #...# #.... #.### #...# #...# .####',
  H: '#...# #...# #...# ##### #...# #...# #...#',
  I: '.###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.',
  J: '..### ...#. ...#. ...#. ...#. #..#. .##..',
  K: '#...# #..#. #.#.. ##... #.#.. #..#. #...#',
  L: '#.... #.... #.... #.... #.... #.... #####',
  M: '#...# ##.## #.#.# #.#.# #...# #...# #...#',
  N: '#...# #...# ##..# #.#.# #..## #...# #...#',
  O: '.###. #...# #...# #...# #...# #...# .###.',
  P: '####. #...# #...# ####. #.... #.... #....',
  Q: '.###. #...# #...# #...# #.#.# #..#. .##.#',
  R: '####. #...# #...# ####. #.#.. #..#. #...#',
  S: '.#### #.... #.... .###. ....# ....# ####.',
  T: '##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..',
  U: '#...# #...# #...# #...# #...# #...# .###.',
  V: '#...# #...# #...# #...# #...# .#.#. ..#..',
  W: '#...# #...# #...# #.#.# #.#.# #.#.# .#.#.',
  X: '#...# #...# .#.#. ..#.. .#.#. #...# #...#',
  Y: '#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..',
  Z: '##### ....# ...#. ..#.. .#... #.... #####',
  a: '..... ..... .###. ....# .#### #...# .####',
  b: '#.... #.... #.##. ##..# #...# #...# ####.',
  c: '..... ..... .###. #.... #.... #...# .###.',
  d: '....# ....# .##.# #..## #...# #...# .####',
  e: '..... ..... .###. #...# ##### #.... .###.',
  f: '..##. .#..# .#... ###.. .#... .#... .#...',
  // Seven rows leave no room below the baseline: g, j, p, q and y squeeze their tails into the x-height's last rows.
  g: '..... ..... .#### #...# .#### ....# .###.',
  h: '#.... #.... #.##. ##..# #...# #...# #...#',
  i: '..#.. ..... .##.. ..#.. ..#.. ..#.. .###.',
  j: '...#. ..... ..##. ...#. ...#. #..#. .##..',
  k: '#.... #.... #..#. #.#.. ##... #.#.. #..#.',
  l: '.##.. ..#.. ..#.. ..#.. ..#.. ..#.. .###.',
  m: '..... ..... ##.#. #.#.# #.#.# #...# #...#',
  n: '..... ..... #.##. ##..# #...# #...# #...#',
  o: '..... ..... .###. #...# #...# #...# .###.',
  p: '..... ..... ####. #...# ####. #.... #....',
  q: '..... ..... .#### #...# .#### ....# ....#',
  r: '..... ..... #.##. ##..# #.... #.... #....',
  s: '..... ..... .#### #.... .###. ....# ####.',
  t: '.#... .#... ###.. .#... .#... .#..# ..##.',
  u: '..... ..... #...# #...# #...# #..## .##.#',
  v: '..... ..... #...# #...# #...# .#.#. ..#..',
  w: '..... ..... #...# #...# #.#.# #.#.# .#.#.',
  x: '..... ..... #...# .#.#. ..#.. .#.#. #...#',
  y: '..... ..... #...# #...# .#### ....# .###.',
  z: '..... ..... ##### ...#. ..#.. .#... #####',
  ' ': '..... ..... ..... ..... ..... ..... .....',
  '.': '..... ..... ..... ..... ..... .##.. .##..',
  ',': '..... ..... ..... ..... .##.. ..#.. .#...',
  '-': '..... ..... ..... .###. ..... ..... .....',
  '—': '..... ..... ..... ##### ..... ..... .....',
  '+': '..... ..#.. ..#.. ##### ..#.. ..#.. .....',
  ':': '..... .##.. .##.. ..... .##.. .##.. .....',
  '/': '..... ....# ...#. ..#.. .#... #.... .....',
  '(': '...#. ..#.. .#... .#... .#... ..#.. ...#.',
  ')': '.#... ..#.. ...#. ...#. ...#. ..#.. .#...',
  '[': '.###. .#... .#... .#... .#... .#... .###.',
  ']': '.###. ...#. ...#. ...#. ...#. ...#. .###.',
  '%': '##... ##..# ...#. ..#.. .#... #..## ...##',
  _: '..... ..... ..... ..... ..... ..... #####',
  '±': '..#.. ..#.. ##### ..#.. ..#.. ..... #####',
  '°': '.##.. #..#. #..#. .##.. ..... ..... .....',
  '?': '.###. #...# ....# ...#. ..#.. ..... ..#..',
  '!': '..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..',
  '=': '..... ..... ##### ..... ##### ..... .....',
  "'": '..#.. ..#.. .#... ..... ..... ..... .....',
  '×': '..... #...# .#.#. ..#.. .#.#. #...# .....',
  '<': '...#. ..#.. .#... #.... .#... ..#.. ...#.',
  '>': '.#... ..#.. ...#. ....# ...#. ..#.. .#...',
  '#': '.#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.',
};

/** glyph → its lit cells, #GLYPH_HEIGHT*GLYPH_WIDTH (row major, 1 = lit) */
const GLYPHS: Map<string, Uint8Array> = new Map(
  Object.entries(GLYPH_ROWS).map(([character, rows]) => {
    const cells = rows.replaceAll(' ', '');
    if (cells.length !== GLYPH_WIDTH * GLYPH_HEIGHT) throw new Error(`bitmapFont: glyph '${character}' has ${cells.length} cells`);
    return [character, Uint8Array.from(cells, (cell) => (cell === '#' ? 1 : 0))];
  }),
);

/** glyphCells: the lit cells of a character's glyph (#7*5, row major, 1 = lit); '?' for characters the font lacks. */
export function glyphCells(character: string): Uint8Array {
  return GLYPHS.get(character) ?? GLYPHS.get('?')!;
}

/** textWidth: width in pixels of `text` drawn at `scale` (no trailing gap). */
export function textWidth(text: string, scale = 1): number {
  const count = Array.from(text).length;
  return count === 0 ? 0 : (count * GLYPH_ADVANCE - (GLYPH_ADVANCE - GLYPH_WIDTH)) * scale;
}

/**
 * drawText: one line of text with its top-left corner at pixel (x, y), each cell a scale × scale block of `rgb`;
 * clipped to the image. → the width drawn, in pixels (textWidth).
 */
export function drawText(image: Image, x: number, y: number, text: string, rgb: Rgb, scale = 1): number {
  const characters = Array.from(text);
  characters.forEach((character, n) => {
    const cells = glyphCells(character);
    const left = x + n * GLYPH_ADVANCE * scale;
    for (let row = 0; row < GLYPH_HEIGHT; row++) {
      for (let column = 0; column < GLYPH_WIDTH; column++) {
        if (cells[row * GLYPH_WIDTH + column]) fillRectangle(image, left + column * scale, y + row * scale, scale, scale, rgb);
      }
    }
  });
  return textWidth(text, scale);
}

/** fitText: `text` cut to at most `maxWidth` pixels at `scale`, ending in '..' when cut. */
export function fitText(text: string, maxWidth: number, scale = 1): string {
  const characters = Array.from(text);
  const fits = Math.max(0, Math.floor((maxWidth / scale + (GLYPH_ADVANCE - GLYPH_WIDTH)) / GLYPH_ADVANCE));
  if (characters.length <= fits) return text;
  return characters.slice(0, Math.max(0, fits - 2)).join('') + '..';
}
