import { pino, type Logger, type DestinationStream } from 'pino';

// Secrets never belong in logs; redaction is the safety net for a careless log call, not the plan.
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'secret', '*.secret'], censor: '[redacted]' },
    },
    destination,
  );
}
