// A real OpenID Connect provider for Slipway's SSO end-to-end test (crates/cli/tests/sso):
// the certified `oidc-provider` package (pinned in package.json, installed with `npm ci` from
// the lockfile) with its development login form, so the platform's relying-party code is
// tested against a provider nobody here wrote. Nothing in this file decides how the flow works; it only says
// who the provider knows and which one client it serves.
//
//   OIDC_CLIENT_SECRET=... node provider.mjs --client-id slipway \
//     --redirect-uri http://127.0.0.1:8700/auth/oidc/callback [--port 0] [--userinfo-claims]
//
// (every option also reads OIDC_PORT, OIDC_CLIENT_ID, OIDC_REDIRECT_URI; the secret is taken
// from OIDC_CLIENT_SECRET or --client-secret-file, never from the command line, which other
// users of the machine can read.)
//
// When it listens, it prints one JSON line on stdout: {"issuer": "http://127.0.0.1:<port>"}.
// It exits when its stdin closes (a test that drops or kills its handle never leaks it) and on
// SIGTERM or SIGINT. Run it by hand with stdin held open: `sleep infinity | node provider.mjs …`.
//
// Accounts: whatever is typed into the login form's "login" field is the account (any
// password). Its claims:
//   sub            "user-" + the first 24 hex digits of SHA-256(lowercased login): stable
//                  across sign-ins, and not the e-mail, as with real providers
//   email          the login when it contains '@', else <login>@example.org
//   email_verified true unless the login contains '+unverified'
//   name           the e-mail's local part
// Consent is granted without a screen (openid email profile), so a sign-in is one form post.
//
// By default the ID token carries the e-mail and name claims (as Google, Entra ID and Keycloak
// do). --userinfo-claims keeps them out of the ID token and serves them only from the
// userinfo endpoint (oidc-provider's conformIdTokenClaims, as Okta does), for a relying party
// that must ask userinfo.
//
// It logs nothing but oidc-provider's notices and warnings and server errors' messages, all on
// standard error: no codes, tokens, secrets or logins.

import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

import Provider from 'oidc-provider';

/** The options, each from argv or else its environment variable; exits 2 naming a bad one. */
function options() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      'client-id': { type: 'string' },
      'client-secret-file': { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      'userinfo-claims': { type: 'boolean', default: false },
    },
  });
  const fail = (field, why) => {
    process.stderr.write(`provider.mjs: ${field}: ${why}\n`);
    process.exit(2);
  };
  const port = Number(values.port ?? process.env.OIDC_PORT ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail('--port', 'not a port number');
  const clientId = values['client-id'] ?? process.env.OIDC_CLIENT_ID;
  if (!clientId) fail('--client-id', 'required (or OIDC_CLIENT_ID)');
  let clientSecret = process.env.OIDC_CLIENT_SECRET;
  if (values['client-secret-file']) {
    try {
      clientSecret = readFileSync(values['client-secret-file'], 'utf8').trim();
    } catch (e) {
      fail('--client-secret-file', `cannot be read (${e.code ?? e.message})`);
    }
  }
  if (!clientSecret) fail('--client-secret-file', 'required (or OIDC_CLIENT_SECRET)');
  const redirectUris = values['redirect-uri']
    ?? (process.env.OIDC_REDIRECT_URI ? process.env.OIDC_REDIRECT_URI.split(',') : []);
  if (redirectUris.length === 0) fail('--redirect-uri', 'required (or OIDC_REDIRECT_URI)');
  for (const uri of redirectUris) {
    try {
      new URL(uri);
    } catch {
      fail('--redirect-uri', `not a URL: ${uri}`);
    }
  }
  return {
    port, clientId, clientSecret, redirectUris, userinfoClaims: values['userinfo-claims'],
  };
}

/** The subject of the account a login names: stable, and not the e-mail (see the header). */
function subjectOf(login) {
  return `user-${createHash('sha256').update(login.toLowerCase()).digest('hex').slice(0, 24)}`;
}

/**
 * The claims of the account a login names (see the header). `sub` is the login here, the
 * account id; the provider replaces it with {@link subjectOf} in what it hands out.
 */
function claimsOf(login) {
  const email = login.includes('@') ? login : `${login}@example.org`;
  return {
    sub: login,
    email,
    email_verified: !login.includes('+unverified'),
    name: email.slice(0, email.indexOf('@')),
  };
}

/** The provider's configuration for one client; keys are made afresh for every run. */
function configuration(opts) {
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
    .export({ format: 'jwk' });
  return {
    clients: [{
      client_id: opts.clientId,
      client_secret: opts.clientSecret,
      redirect_uris: opts.redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      subject_type: 'pairwise',
    }],
    jwks: { keys: [{ ...signing, kid: randomBytes(8).toString('hex'), use: 'sig', alg: 'RS256' }] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    scopes: ['openid', 'email', 'profile'],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
    },
    conformIdTokenClaims: opts.userinfoClaims,
    features: { devInteractions: { enabled: true } },
    // The login form's text is the account id; `sub` is derived from it by
    // pairwiseIdentifier below, which oidc-provider applies to every token and userinfo answer.
    async findAccount(ctx, login) {
      return {
        accountId: login,
        async claims() {
          return claimsOf(login);
        },
      };
    },
    subjectTypes: ['pairwise'],
    async pairwiseIdentifier(ctx, login) {
      return subjectOf(login);
    },
    // Consent is part of the company's sign-in, not of this test: every sign-in is granted
    // the three scopes and their claims, so the login form is the only page.
    async loadExistingGrant(ctx) {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid email profile');
      grant.addOIDCClaims(['sub', 'email', 'email_verified', 'name']);
      await grant.save();
      return grant;
    },
    renderError(ctx, out) {
      // The error page a browser sees; the code and description only (no request dump).
      ctx.type = 'html';
      const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
      ctx.body = `<!DOCTYPE html><title>oops</title><h1>${escape(out.error)}</h1>`
        + `<p>${escape(out.error_description ?? '')}</p>`;
    },
  };
}

// Standard output carries the one issuer line and nothing else: oidc-provider's notices
// (console.info) go to standard error with its warnings.
console.log = console.error;
console.info = console.error;

const opts = options();
let handler = (req, res) => {
  res.statusCode = 503;
  res.end();
};
const server = createServer((req, res) => handler(req, res));

/** Ends the process once; the HTTP server's open connections do not hold it. */
function stop() {
  server.closeAllConnections?.();
  server.close();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.on('error', stop);
process.stdin.resume();

server.listen(opts.port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, configuration(opts));
  provider.on('server_error', (ctx, err) => {
    process.stderr.write(`provider.mjs: server error: ${err.message}\n`);
  });
  handler = provider.callback();
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});
