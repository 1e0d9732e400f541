import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { EmailAddressError, NormalEmail, normalEmail, normaliseEmail } from './email-address';

describe('normalEmail: one spelling per email', () => {
  it.each([
    ['  Alice@A.Example\t', 'alice@a.example'],
    ['ALICE@A.EXAMPLE', 'alice@a.example'],
    // Only A-Z are lowercased in the local part: U+0130 stays, so this is another address than alice@a.example.
    ['alİce@a.example', 'alİce@a.example'],
    ['ÀLICE@A.EXAMPLE', 'Àlice@a.example'],
    // NFC: a decomposed é (e + U+0301) is the composed one.
    ['re\u0301mi@a.example', 'r\u00e9mi@a.example'],
    // The domain through IDNA to ASCII, then lowercased; full-width letters are mapped.
    ['sam@Bücher.Example', 'sam@xn--bcher-kva.example'],
    ['sam@ＡＣＭＥ.example', 'sam@acme.example'],
    ['sam@xn--bcher-kva.example', 'sam@xn--bcher-kva.example'],
    // The last @ separates the domain; a quoted local part keeps its @.
    ['"a@b"@Studio.example', '"a@b"@studio.example'],
  ])('%j -> %j', (raw, normal) => {
    expect(normalEmail(raw)).toBe(normal);
    // Idempotent: the normal form is its own normal form.
    expect(normalEmail(normal)).toBe(normal);
  });

  it.each(['no-at-sign', '@a.example', 'alice@', 'alice@\u0378.example', 'alice@ex ample', 'alice@[1.2.3.4]'])('%j has none', (raw) => {
    expect(normalEmail(raw)).toBeNull();
  });

  it('normaliseEmail names the field when the domain cannot be converted', () => {
    expect(() => normaliseEmail('alice@\u0378.example', 'admin.email')).toThrow(EmailAddressError);
    expect(() => normaliseEmail('alice@\u0378.example', 'admin.email')).toThrow(
      'admin.email must be an email address: its domain cannot be converted to ASCII (IDNA)',
    );
    expect(() => normaliseEmail('nope')).toThrow('email must be an email address');
    expect(normaliseEmail(' Bob@B.Example ')).toBe('bob@b.example');
  });

  describe('as a DTO field', () => {
    class Dto {
      @NormalEmail('admin.email')
      email: string;
    }
    const check = (email: unknown) => {
      const dto = plainToInstance(Dto, { email });
      return { dto, messages: validateSync(dto).flatMap((error) => Object.values(error.constraints ?? {})) };
    };

    it('holds the normal form once read', () => {
      expect(check(' ALİCE@Bücher.example ')).toEqual({ dto: { email: 'alİce@xn--bcher-kva.example' }, messages: [] });
    });

    it('refuses what is not an email, naming the field and why', () => {
      expect(check('alice@\u0378.example').messages).toEqual([
        'admin.email must be an email address: its domain cannot be converted to ASCII (IDNA)',
      ]);
      expect(check('alice').messages).toEqual(['admin.email must be an email address']);
      expect(check('a b@c.example').messages).toEqual(['admin.email must be an email address']);
      expect(check(42).messages).toEqual(['admin.email must be an email address']);
    });
  });
});
