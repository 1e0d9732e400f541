import { fileNameProblem } from '../../../src/storage/items/file-name';
import { fileLabel, uploadName } from './file-names';

describe("the console's file names", () => {
  it('calls a file by its name, or by its kind and date', () => {
    expect(fileLabel({ fileName: 'Übersicht.pdf', kind: 'document', createdAt: '2026-11-27T10:00:12Z' })).toBe('Übersicht.pdf');
    expect(fileLabel({ kind: 'image', createdAt: '2026-11-27T10:00:12Z' }, 'en-US')).toMatch(/^Image of Nov 27, 2026, \d{1,2}:\d{2}\s?[AP]M$/);
  });

  it("sends a browser's file name as it is when the API takes it", () => {
    for (const name of ['red.png', 'Übersicht März.png', '夜の街 🎮.jpg', 'x'.repeat(255)]) expect(uploadName(name)).toBe(name);
  });

  it('makes any other name one the API takes, keeping its extension', () => {
    const long = uploadName(`${'level '.repeat(60)}.png`)!;
    expect([...long]).toHaveLength(255);
    expect(long.endsWith('….png')).toBe(true);
    expect([...uploadName('🎮'.repeat(300))!]).toHaveLength(255);
    expect(uploadName('a/b\\c\n.txt')).toBe('a_b_c.txt');
    expect(uploadName('\u0007')).toBeUndefined();
    for (const name of [`${'level '.repeat(60)}.png`, '🎮'.repeat(300), 'a/b\\c\n.txt', 'tab\there\u0085.txt']) {
      expect(fileNameProblem(uploadName(name)!)).toBeNull();
    }
  });
});
