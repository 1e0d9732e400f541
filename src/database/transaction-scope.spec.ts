import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

const SRC = join(__dirname, '..');

/**
 * Where code that is handed where to run (a parameter `tx` or `db`, or one typed `Transaction` or `Db`) also
 * reaches for the autocommit `this.sql`: handed a transaction, a statement there would run outside it, on
 * another connection, and commit whatever the transaction then does. The compiler cannot tell the two apart
 * when a method takes any `Db`, so this reads the sources instead.
 */
function autocommitWhereHandedADb(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const handedWhereToRun = (node: ts.SignatureDeclaration) =>
    node.parameters.some(
      (parameter) => ['tx', 'db'].includes(parameter.name.getText(file)) || ['Transaction', 'Db'].includes(parameter.type?.getText(file) ?? ''),
    );
  const visit = (node: ts.Node, handed: boolean): void => {
    const inside = handed || (ts.isFunctionLike(node) && handedWhereToRun(node));
    if (inside && ts.isPropertyAccessExpression(node) && node.expression.kind === ts.SyntaxKind.ThisKeyword && node.name.text === 'sql') {
      const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
      found.push(`${fileName}:${line + 1}`);
    }
    ts.forEachChild(node, (child) => visit(child, inside));
  };
  visit(file, false);
  return found;
}

function sources(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('code handed where to run (a transaction, or any Db)', () => {
  it('sends no statement on autocommit (this.sql) instead', () => {
    const found = sources(SRC).flatMap((path) => autocommitWhereHandedADb(relative(SRC, path), readFileSync(path, 'utf8')));
    expect(found).toEqual([]);
  });

  it('the check finds this.sql in a method or callback handed one, and nowhere else', () => {
    const source = `
      class Example {
        read(organizationId: string) { return this.repository.find(this.sql, organizationId); }
        write(tx: Transaction, organizationId: string) { return this.repository.find(this.sql, organizationId); }
        later(id: string) { return this.transactions.run(async (tx) => [tx, await this.repository.find(this.sql, id)]); }
        either(id: string) { return this.allocation.within(id, (db) => this.repository.find(this.sql, id)); }
        typed(on: Db, id: string) { return this.repository.find(this.sql, id); }
      }`;
    expect(autocommitWhereHandedADb('example.ts', source)).toEqual(['example.ts:4', 'example.ts:5', 'example.ts:6', 'example.ts:7']);
  });
});
