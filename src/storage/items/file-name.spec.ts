import { fileNameProblem } from './file-name';

describe('file names', () => {
  it.each(['a', 'level 3.png', 'Übersicht – März.pdf', '夜の街.jpg', '🎮 save.dat', '..', 'x'.repeat(255), '🎮'.repeat(255)])(
    'accepts %j',
    (name) => {
      expect(fileNameProblem(name)).toBeNull();
    },
  );

  it.each([
    ['', /1-255 characters.*got 0/],
    ['x'.repeat(256), /got 256/],
    ['🎮'.repeat(256), /got 256/],
    ['maps/level.png', /holds a \//],
    ['C:\\fakepath\\a.png', /holds a \\/],
    ['line\nbreak.txt', /U\+000A/],
    ['tab\t.txt', /U\+0009/],
    ['nul\u0000.txt', /NUL/],
    ['del\u007f.txt', /U\+007F/],
    ['c1\u0085.txt', /U\+0085/],
    ['\ud800.txt', /surrogate/],
  ])('refuses %j', (name, reason) => {
    expect(fileNameProblem(name)).toMatch(reason);
  });
});
