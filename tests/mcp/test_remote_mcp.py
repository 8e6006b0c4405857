"""End-to-end tests of the platform's own tool server, `/mcp`, through the official Python MCP
client (its unified `Client` over Streamable HTTP, negotiating the newest protocol it and the
server share), authenticated with a personal token as a bearer header.

Starts a real platform server and checks what an assistant meets: the tools offered (every one
but those that need the caller's files), each call's result valid against its tool's
outputSchema (jsonschema), a read-only token that neither lists nor runs a write tool (the call
is refused before it runs), an app-limited token that sees only its app, the audit naming the
calls, and a revoked token refused. Then the SDK's OAuthClientProvider signs an assistant in
as a client would: it discovers the authorization server from the 401, registers, sends the
"browser" to the authorization page, where the test reads the code and approves it read-only as
the signed-in person (the API `slipway grants approve` calls), exchanges the code with PKCE and
calls tools with the grant's scope; the grant revoked, the next request is refused. Last, with
the platform's single sign-on set up against the OpenID provider of the SSO tests (tests/oidc),
a new person signs in on the authorization page itself and so approves a read-write grant.
Run by scripts/mcp-e2e.sh with the `mcp` package installed; SLIPWAY_BIN is the slipway binary.
"""

import asyncio
import json
import os
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

import urllib.parse

import httpx2 as httpx  # the HTTP client the MCP SDK itself uses
import jsonschema
from mcp.client.auth import OAuthClientProvider
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from mcp_types import ElicitResult

from test_mcp import PLATFORM_TOOLS, SPEC_TOOLS, free_port

SLIPWAY = os.environ["SLIPWAY_BIN"]
FILE_TOOLS = {"scaffold_app", "build_app"}
# Where the assistant's browser returns (nothing listens: the test reads the address).
REDIRECT = "http://127.0.0.1:33418/callback"


class Platform(unittest.TestCase):
    """A platform server of the test's own, and its owner's token."""

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="slipway-remote-mcp-")
        data = os.path.join(self.work, "platform")
        if not hasattr(self, "port"):
            self.port = free_port()
            self.base = f"http://127.0.0.1:{self.port}"
        self.platform = subprocess.Popen(
            [SLIPWAY, "platform", "serve", "--listen", f"127.0.0.1:{self.port}", "--data-dir", data,
             "--builder", "native", "--gateway-listen", f"127.0.0.1:{free_port()}", *self.platform_args()],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        token_file = os.path.join(data, "bootstrap-token")
        deadline = time.time() + 30
        while not os.path.exists(token_file) and time.time() < deadline:
            time.sleep(0.1)
        with open(token_file) as f:
            self.token = f.read().strip()
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"{self.base}/health")
                break
            except OSError:
                time.sleep(0.1)

    def platform_args(self):
        """More options of `slipway platform serve`."""
        return []

    def tearDown(self):
        self.platform.terminate()
        self.platform.wait(timeout=30)

    def api(self, method, path, token, body=None):
        request = urllib.request.Request(
            f"{self.base}{path}", method=method, data=None if body is None else json.dumps(body).encode(),
            headers={"authorization": f"Bearer {token}", "content-type": "application/json"})
        with urllib.request.urlopen(request) as response:
            return json.loads(response.read() or b"null")

    def assistant(self):
        """The SDK's OAuth client as an assistant registers it; `self.browse(url)` is the
        person's browser, returning the address it came back to."""
        came_back = {}

        async def redirect_handler(url):
            came_back["url"] = await asyncio.get_running_loop().run_in_executor(None, self.browse, url)

        async def callback_handler():
            query = urllib.parse.parse_qs(urllib.parse.urlparse(came_back["url"]).query)
            return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0], iss=query["iss"][0])

        return OAuthClientProvider(
            server_url=f"{self.base}/mcp",
            client_metadata=OAuthClientMetadata(
                client_name="Python assistant", redirect_uris=[REDIRECT],
                grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                token_endpoint_auth_method="none", scope="read write"),
            storage=Memory(), redirect_handler=redirect_handler, callback_handler=callback_handler)

    # The person at the client: what they were asked, and whether they say yes.
    says_yes = True

    # What the person types on a secret's page (None: they decline in the client instead).
    types = None

    async def the_person(self, context, params):
        self.asked.append(params.message)
        if getattr(params, "url", None):
            # A URL-mode request: the person opens the page in their browser and types there.
            self.pages.append(params.url)
            if self.types is None:
                return ElicitResult(action="decline")
            await asyncio.get_running_loop().run_in_executor(None, self.type_on_page, params.url, self.types)
            return ElicitResult(action="accept")
        return ElicitResult(action="accept", content={"confirm": self.says_yes})

    def type_on_page(self, url, pairs):
        """The person's browser on a secret's page: reads who asks, types each key and value."""
        with urllib.request.urlopen(url) as response:
            page = response.read().decode()
            self.assertEqual(response.headers["referrer-policy"], "no-referrer")
        self.assertIn(self.api("GET", "/v1/account/me", self.token)["email"], page)
        self.shown_pages.append(page)
        form = [("key", k) for k in pairs] + [("value", v) for v in pairs.values()] + [("action", "save")]
        with urllib.request.urlopen(urllib.request.Request(
                url, data=urllib.parse.urlencode(form).encode(), method="POST")) as response:
            self.shown_pages.append(response.read().decode())

    def client(self, token, query=""):
        self.asked = getattr(self, "asked", [])
        self.pages = getattr(self, "pages", [])
        self.shown_pages = getattr(self, "shown_pages", [])
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        return Client(streamable_http_client(f"{self.base}/mcp{query}", http_client=http), mode="auto",
                      elicitation_callback=self.the_person)



class RemoteMcp(Platform):
    def test_assistants_act_as_their_token_allows(self):
        asyncio.run(self.remote())

    async def call(self, client, schemas, tool, args):
        result = await client.call_tool(tool, args)
        data = result.structured_content
        self.assertIsNotNone(data, tool)
        if not result.is_error:
            jsonschema.validate(data, schemas[tool])
        return result, data

    async def remote(self):
        async with self.client(self.token) as client:
            listed = await client.list_tools()
            names = sorted(t.name for t in listed.tools)
            self.assertEqual(names, sorted(set(SPEC_TOOLS + PLATFORM_TOOLS) - FILE_TOOLS))
            schemas = {t.name: t.output_schema for t in listed.tools}
            for t in listed.tools:
                self.assertTrue(t.title, t.name)
                self.assertIsNotNone(t.annotations.read_only_hint, t.name)
                self.assertEqual(t.output_schema.get("type"), "object", t.name)
            destructive = {t.name for t in listed.tools if t.annotations.destructive_hint}
            self.assertTrue({"delete_app", "delete_secret", "revoke_app_role", "disable_app"} <= destructive)

            _, templates = await self.call(client, schemas, "get_available_templates", {})
            self.assertEqual(len(templates["templates"]), 6)
            _, generated = await self.call(client, schemas, "generate_devfile", {
                "app_name": "remote-demo", "display_name": "Remote Demo", "description": "A demo.", "port": 8080})
            _, report = await self.call(client, schemas, "validate_devfile", {
                "devfile_content": generated["content"]})
            self.assertTrue(report["valid"], report)
            result, refused = await self.call(client, schemas, "validate_devfile", {"devfile_path": "/etc/hostname"})
            self.assertTrue(result.is_error)
            self.assertEqual(refused["field"], "devfile_path")

            _, orders = await self.call(client, schemas, "register_app", {
                "name": "orders", "display_name": "Orders"})
            _, billing = await self.call(client, schemas, "register_app", {
                "name": "billing", "display_name": "Billing"})
            # A destructive call asks the person (an input-required result the client answers);
            # a no leaves the app alone.
            self.says_yes = False
            result, refused = await self.call(client, schemas, "delete_app", {"app_id": billing["app_id"]})
            self.assertTrue(result.is_error, refused)
            self.assertIn("did not confirm", refused["error"])
            self.assertIn(billing["app_id"], self.asked[-1])
            self.says_yes = True
            for tool, args in [
                ("list_apps", {}),
                ("get_app", {"app_id": orders["app_id"]}),
                ("get_app_status", {"app_id": orders["app_id"]}),
                ("list_account_users", {}),
                ("list_grantable_roles", {"app_id": orders["app_id"]}),
                ("list_app_permissions", {"app_id": orders["app_id"]}),
                ("list_secrets", {"secret_type": "app", "app_id": orders["app_id"]}),
                ("create_secret", {"secret_type": "app", "app_id": orders["app_id"], "secret_path": "db",
                                   "data": json.dumps({"PASSWORD": "pw"})}),
                ("get_secret", {"secret_type": "app", "app_id": orders["app_id"], "secret_path": "db"}),
                ("list_domains", {"app_id": orders["app_id"]}),
                ("list_previews", {"app_id": orders["app_id"]}),
                ("disable_app", {"app_id": billing["app_id"]}),
                ("enable_app", {"app_id": billing["app_id"]}),
            ]:
                result, data = await self.call(client, schemas, tool, args)
                self.assertFalse(result.is_error, f"{tool}: {data}")

            # A secret without its value: the person types it on the platform's page, and the
            # value never passes through the client (only the version comes back).
            self.types = {"API_KEY": "typed-by-hand-42"}
            target = {"secret_type": "app", "app_id": orders["app_id"], "secret_path": "stripe"}
            result, written = await self.call(client, schemas, "create_secret", target)
            self.assertFalse(result.is_error, written)
            self.assertEqual(written["version"], 1)
            self.assertNotIn("typed-by-hand-42", json.dumps(written))
            self.assertTrue(self.pages[-1].startswith(f"{self.base}/secrets/enter?page="), self.pages[-1])
            self.assertIn("stripe", self.shown_pages[-2])
            self.assertIn("Saved", self.shown_pages[-1])
            _, read = await self.call(client, schemas, "get_secret", target)
            self.assertEqual(read["data"], {"API_KEY": "typed-by-hand-42"})
            # The page works once: opened again, it says what was saved and offers no form.
            again = urllib.request.urlopen(self.pages[-1]).read().decode()
            self.assertIn("Version 1 of stripe", again)
            self.assertNotIn("<form", again)
            # Declined in the client: nothing written, and the page is closed.
            self.types = None
            result, refused = await self.call(client, schemas, "update_secret", target)
            self.assertTrue(result.is_error, refused)
            self.assertIn("declined", refused["error"])
            page = urllib.request.urlopen(self.pages[-1]).read().decode()
            self.assertIn("Nothing was saved", page)
            _, read = await self.call(client, schemas, "get_secret", target)
            self.assertEqual(read["version"], 1)
            # A secret that exists already is refused before anyone is asked to type.
            asked = len(self.pages)
            result, refused = await self.call(client, schemas, "create_secret", target)
            self.assertTrue(result.is_error, refused)
            self.assertEqual(len(self.pages), asked)

        # Read-only: no write tool listed; a write call refused (403 before it runs).
        reader = self.api("POST", "/v1/tokens", self.token, {"name": "assistant", "read_only": True})
        async with self.client(reader["token"]) as client:
            listed = await client.list_tools()
            names = {t.name for t in listed.tools}
            self.assertIn("get_app_status", names)
            self.assertFalse({"delete_app", "register_app", "create_secret"} & names, names)
            with self.assertRaises(Exception):
                await client.call_tool("delete_app", {"app_id": billing["app_id"]})
        self.assertEqual(self.api("GET", f"/v1/apps/{billing['app_id']}", self.token)["name"], "billing")

        # One app: the other is not there for it.
        limited = self.api("POST", "/v1/tokens", self.token, {"name": "orders-assistant", "apps": ["orders"]})
        async with self.client(limited["token"], "?toolsets=apps") as client:
            listed = await client.list_tools()
            self.assertNotIn("register_app", {t.name for t in listed.tools})
            self.assertNotIn("get_app_logs", {t.name for t in listed.tools}, "only the apps toolset")
            result = await client.call_tool("list_apps", {})
            self.assertEqual([a["name"] for a in result.structured_content["apps"]], ["orders"])
            result = await client.call_tool("get_app", {"app_id": billing["app_id"]})
            self.assertTrue(result.is_error)

        audit = self.api("GET", "/v1/account/audit", self.token)
        calls = [e for e in audit["entries"] if e["action"] == "mcp.tool_called"]
        self.assertTrue(any(e["subject"] == "create_secret" for e in calls))
        self.assertFalse(any("pw" in e["detail"] for e in calls), "never a value")
        self.assertNotIn("typed-by-hand-42", json.dumps(audit), "never a typed value")

        # Revoked: refused at once.
        self.api("DELETE", f"/v1/tokens/{reader['id']}", self.token)
        request = urllib.request.Request(
            f"{self.base}/mcp", method="POST", data=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
            headers={"authorization": f"Bearer {reader['token']}", "content-type": "application/json",
                     "accept": "application/json, text/event-stream"})
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request)
        self.assertEqual(refused.exception.code, 401)
        self.assertIn("resource_metadata=", refused.exception.headers["www-authenticate"])


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Memory:
    """The SDK's TokenStorage, in memory."""

    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


class OAuthSignIn(Platform):
    def test_an_assistant_signs_in_with_oauth(self):
        asyncio.run(self.sign_in())

    def browse(self, url):
        """The browser and the person: open the authorization URL, read the page's code,
        approve it read-only and without secrets where signed in, and follow the page back to the client."""
        opener = urllib.request.build_opener(NoRedirects)

        def location(target):
            try:
                opener.open(target)
            except urllib.error.HTTPError as answer:
                self.assertIn(answer.code, (302, 303), answer.read()[:300])
                return urllib.parse.urljoin(target, answer.headers["location"])
            self.fail(f"{target} did not redirect")

        page = location(url)
        html = urllib.request.urlopen(page).read().decode()
        code = html.split('data-code="')[1].split('"')[0]
        seen = self.api("GET", f"/v1/oauth/requests/{code}", self.token)
        self.assertEqual(seen["client_name"], "Python assistant")
        self.api("POST", f"/v1/oauth/requests/{code}/approve", self.token, {"read_only": True, "secrets": False})
        return location(page)

    async def sign_in(self):
        self.api("POST", "/v1/apps", self.token, {"name": "orders", "display_name": "Orders"})
        provider = self.assistant()
        http = create_mcp_http_client(auth=provider)
        async with Client(streamable_http_client(f"{self.base}/mcp", http_client=http), mode="auto") as client:
            listed = await client.list_tools()
            names = {t.name for t in listed.tools}
            self.assertIn("list_apps", names)
            self.assertFalse({"delete_app", "register_app", "get_secret"} & names, "read-only, no secrets")
            result = await client.call_tool("list_apps", {})
            self.assertEqual([a["name"] for a in result.structured_content["apps"]], ["orders"])

        grants = self.api("GET", "/v1/grants", self.token)["grants"]
        self.assertEqual([g["client_name"] for g in grants], ["Python assistant"])
        self.assertTrue(grants[0]["scope"]["read_only"])
        access = provider.context.current_tokens.access_token
        self.api("DELETE", f"/v1/grants/{grants[0]['id']}", self.token)
        request = urllib.request.Request(
            f"{self.base}/mcp", method="POST", data=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
            headers={"authorization": f"Bearer {access}", "content-type": "application/json",
                     "accept": "application/json, text/event-stream"})
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request)
        self.assertEqual(refused.exception.code, 401)
        # The grant's token is refused by the REST API: it is for /mcp only.
        with self.assertRaises(urllib.error.HTTPError) as elsewhere:
            self.api("GET", "/v1/apps", access)
        self.assertEqual(elsewhere.exception.code, 401)


OIDC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oidc")


class SsoSignIn(Platform):
    """The person signs in with the platform's single sign-on on the authorization page: the
    OpenID provider the SSO tests start (npm's oidc-provider, tests/oidc) and its login form."""

    def setUp(self):
        if not os.path.exists(os.path.join(OIDC_DIR, "node_modules", "oidc-provider")):
            if os.environ.get("CI"):
                self.fail("tests/oidc/node_modules is missing: under CI the SSO sign-in must run")
            self.skipTest("tests/oidc/node_modules is missing (npm ci --prefix tests/oidc)")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.provider = subprocess.Popen(
            ["node", "provider.mjs", "--client-id", "slipway",
             "--redirect-uri", f"{self.base}/auth/oidc/callback"],
            cwd=OIDC_DIR, env={**os.environ, "OIDC_CLIENT_SECRET": "provider-secret-for-the-test"},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.issuer = json.loads(self.provider.stdout.readline())["issuer"]
        self.secret_file = tempfile.NamedTemporaryFile("w", suffix=".secret", delete=False)
        self.secret_file.write("provider-secret-for-the-test\n")
        self.secret_file.close()
        super().setUp()

    def platform_args(self):
        return ["--public-url", self.base, "--oidc-issuer", self.issuer, "--oidc-client-id", "slipway",
                "--oidc-client-secret-file", self.secret_file.name, "--oidc-allowed-domains", "example.com"]

    def tearDown(self):
        super().tearDown()
        self.provider.stdin.close()
        self.provider.wait(timeout=30)
        os.unlink(self.secret_file.name)

    def test_a_person_signs_in_with_sso_on_the_authorization_page(self):
        asyncio.run(self.sign_in())

    def follow(self, browser, response):
        """Follows redirects with GET, as a browser does, stopping at the assistant's address
        (returned as a string; nothing listens there)."""
        while response.status_code in (302, 303):
            target = urllib.parse.urljoin(str(response.url), response.headers["location"])
            if target.startswith(REDIRECT):
                return target
            response = browser.get(target)
        return response

    def log_in_at_provider(self, browser, login, who):
        """Fills the provider's login form (the page `login`) as `who`; where the redirects end."""
        self.assertEqual(login.status_code, 200, login.text[:300])
        html = login.text[login.text.index("<form"):]
        html = html[:html.index("</form>")]
        action = html.split('action="')[1].split('"')[0]
        fields = {}
        for tag in html.split("<input")[1:]:
            tag = tag.split(">")[0]
            if 'type="hidden"' in tag:
                fields[tag.split('name="')[1].split('"')[0]] = tag.split('value="')[1].split('"')[0]
        fields.update(login=who, password="anything")
        return self.follow(browser, browser.post(urllib.parse.urljoin(str(login.url), action), data=fields))

    def browse(self, url):
        """The browser and the person: the page's form (read and change, every app) sent with
        "Sign in with single sign-on", then the provider's login form as dave@example.com, who
        has never used Slipway (his domain may join); where the redirects end."""
        with httpx.Client(follow_redirects=False, timeout=30) as browser:
            page = self.follow(browser, browser.get(url))
            self.assertEqual(page.status_code, 200, page.text[:300])
            self.assertIn("Sign in with single sign-on", page.text)
            key = page.text.split('name="key" value="')[1].split('"')[0]
            choice = {"access": "write", "apps": "", "key": key, "then": "sso"}
            # Without the page's cookie (another site posting the form), nothing happens.
            stranger = httpx.post(str(page.url), data=choice)
            self.assertEqual(stranger.status_code, 403, stranger.text[:300])
            login = self.follow(browser, browser.post(str(page.url), data=choice))
            back = self.log_in_at_provider(browser, login, "dave@example.com")
            self.assertIsInstance(back, str, f"the sign-in did not return to the assistant: {getattr(back, 'text', '')[:500]}")
            return back

    def test_a_sign_in_started_in_another_browser_approves_nothing(self):
        """Someone opens an assistant's request page, asks to sign in, and sends the provider's
        address to a victim: the victim signs in, and the callback refuses it (the victim's
        browser lacks the key of the browser that started), so nothing is approved."""
        client = self.register_client()
        with httpx.Client(follow_redirects=False, timeout=30) as attacker, \
                httpx.Client(follow_redirects=False, timeout=30) as victim:
            page = self.follow(attacker, attacker.get(self.authorize_url(client)))
            key = page.text.split('name="key" value="')[1].split('"')[0]
            started = attacker.post(str(page.url), data={"access": "write", "key": key, "then": "sso"})
            self.assertEqual(started.status_code, 303, started.text[:300])
            login = self.follow(victim, victim.get(started.headers["location"]))
            refused = self.log_in_at_provider(victim, login, "dave@example.com")
            self.assertEqual(refused.status_code, 403, refused.text[:300])
            self.assertIn("started elsewhere", refused.text)
            # The request still waits for its person; no code went anywhere.
            still = attacker.get(str(page.url))
            self.assertEqual(still.status_code, 200, still.text[:300])

    def test_a_secret_is_typed_only_by_its_person_signed_in(self):
        asyncio.run(self.secret_after_sign_in())

    async def secret_after_sign_in(self):
        """With single sign-on, a secret's page takes a value only in a browser where the
        person the assistant acts for signed in for it: not before, and not as someone else."""
        invite = self.api("POST", "/v1/account/invites", self.token, {"email": "dave@example.com"})
        dave = self.api("POST", "/v1/invites/accept", None, {"code": invite["code"], "name": "Dave"})["token"]
        app = self.api("POST", "/v1/apps", dave, {"name": "ledger", "display_name": "Ledger"})
        self.types = {"API_KEY": "signed-in-7"}
        target = {"secret_type": "app", "app_id": app["id"], "secret_path": "stripe"}
        async with self.client(dave) as client:
            result = await client.call_tool("create_secret", target)
            self.assertFalse(result.is_error, result.structured_content)
            self.assertEqual(result.structured_content["version"], 1)
            read = await client.call_tool("get_secret", target)
            self.assertEqual(read.structured_content["data"], {"API_KEY": "signed-in-7"})

    def type_on_page(self, url, pairs):
        """The page with single sign-on: a stranger's sign-in opens nothing; the person signs in
        and then types."""
        key = urllib.parse.parse_qs(urllib.parse.urlparse(url).query)["page"][0]
        with httpx.Client(follow_redirects=False, timeout=30) as stranger:
            first = stranger.get(url)
            self.assertEqual(first.status_code, 200, first.text[:300])
            self.assertIn("Sign in with single sign-on to type it", first.text)
            self.assertNotIn('name="value"', first.text)
            refused = stranger.post(url, data={"page": key, "key": "API_KEY", "value": "x", "action": "save"})
            self.assertNotIn("Saved", refused.text)
            login = self.follow(stranger, stranger.post(url, data={"page": key, "action": "sso"}))
            elsewhere = self.log_in_at_provider(stranger, login, "erin@example.com")
            self.assertEqual(elsewhere.status_code, 403, elsewhere.text[:300])
            self.assertIn("someone else", elsewhere.text)
        with httpx.Client(follow_redirects=False, timeout=30) as browser:
            login = self.follow(browser, browser.post(url, data={"page": key, "action": "sso"}))
            page = self.log_in_at_provider(browser, login, "dave@example.com")
            self.assertEqual(page.status_code, 200, page.text[:300])
            self.assertIn('name="value"', page.text)
            form = [("page", key)] + [("key", k) for k in pairs] + [("value", v) for v in pairs.values()]
            saved = browser.post(f"{self.base}/secrets/enter", content=urllib.parse.urlencode(form + [("action", "save")]),
                                 headers={"content-type": "application/x-www-form-urlencoded"})
            self.assertIn("Saved", saved.text)

    def register_client(self):
        request = urllib.request.Request(
            f"{self.base}/oauth/register", method="POST",
            data=json.dumps({"client_name": "Someone's assistant", "redirect_uris": [REDIRECT]}).encode(),
            headers={"content-type": "application/json"})
        with urllib.request.urlopen(request) as answer:
            return json.loads(answer.read())["client_id"]

    def authorize_url(self, client_id):
        query = urllib.parse.urlencode({
            "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "s" * 16,
            "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge_method": "S256"})
        return f"{self.base}/oauth/authorize?{query}"

    async def sign_in(self):
        provider = self.assistant()
        http = create_mcp_http_client(auth=provider)
        async with Client(streamable_http_client(f"{self.base}/mcp", http_client=http), mode="auto") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            self.assertIn("register_app", names, "read and change was granted")
            self.assertNotIn("get_secret", names, "secrets were not granted")
            made = await client.call_tool("register_app", {"name": "daves-app", "display_name": "Dave's app"})
            self.assertFalse(made.is_error, made)
            listed = await client.call_tool("list_apps", {})
            self.assertEqual([a["name"] for a in listed.structured_content["apps"]], ["daves-app"])

        # Dave joined by signing in, and the approval is his in the audit.
        people = {p["email"]: p for p in self.api("GET", "/v1/account/users", self.token)["users"]}
        self.assertEqual(people["dave@example.com"]["role"], "member")
        audit = self.api("GET", "/v1/account/audit", self.token)["entries"]
        approved = [e for e in audit if e["action"] == "assistant.approved"]
        self.assertEqual([e["actor"]["email"] for e in approved], ["dave@example.com"])


if __name__ == "__main__":
    unittest.main()
