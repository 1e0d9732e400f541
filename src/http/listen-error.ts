/**
 * The HTTP server cannot listen where PORT and HOST say. Its message names both and what to change; boot prints
 * it alone, with its code, and exits 1.
 */
export class ListenError extends Error {
  constructor(
    readonly code: 'PORT_IN_USE' | 'PORT_NOT_PERMITTED' | 'HOST_NOT_AVAILABLE',
    message: string,
  ) {
    super(message);
    this.name = 'ListenError';
  }
}

/** The error of a failed `listen(port, host)` said for the operator; one that is not about PORT or HOST as it was. */
export function explainListenFailure(error: unknown, port: number, host: string): unknown {
  const where = `Cannot listen on ${host}:${port} (HOST=${host}, PORT=${port})`;
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'EADDRINUSE':
      return new ListenError('PORT_IN_USE', `${where}: the port is in use by another process. Stop that process, or set PORT to a free port.`);
    case 'EACCES':
      return new ListenError(
        'PORT_NOT_PERMITTED',
        `${where}: this user may not listen on a port below 1024. Set PORT to 1024 or above (a proxy can forward to it), or give ` +
          'the process that right (CAP_NET_BIND_SERVICE).',
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ListenError(
        'HOST_NOT_AVAILABLE',
        `${where}: HOST is not an address of this machine. Set HOST to one of its addresses, 127.0.0.1 for this machine ` +
          'only, or 0.0.0.0 for every interface.',
      );
    default:
      return error;
  }
}
