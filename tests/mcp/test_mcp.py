"""End-to-end test of `slipway mcp` through the official Python MCP client (stdio).

Starts a real platform server, then drives the tool server the way an assistant would:
list the spec's 26 tools and the platform's domain tools, templates -> scaffold -> validate -> register -> app secrets
(create, get, list, update, share) -> build -> status until RUNNING -> logs -> sharing (account
users, grantable roles, grant, permissions, revoke) -> disable -> enable -> delete, checking the
result keys the spec names, and every result against its tool's outputSchema.
Run by scripts/mcp-e2e.sh with the `mcp` package installed; SLIPWAY_BIN is the slipway binary.
"""

import asyncio
import json
import os
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp_types import ElicitResult
from mcp.client.stdio import stdio_client

SLIPWAY = os.environ["SLIPWAY_BIN"]

# The spec's 26 operations: 15 app development, 6 secrets, 5 sharing.
SPEC_TOOLS = sorted([
    "get_available_templates", "scaffold_app", "validate_devfile", "generate_devfile", "register_app",
    "build_app", "list_apps", "get_app", "get_app_status", "get_app_logs", "enable_app", "disable_app",
    "delete_app", "get_build_scan_report", "cancel_build",
    "create_secret", "get_secret", "list_secrets", "update_secret", "delete_secret", "share_secret",
    "list_grantable_roles", "list_app_permissions", "grant_app_role", "revoke_app_role", "list_account_users",
])
# The platform's own tools beyond the spec's: an app's custom domains and its git source.
PLATFORM_TOOLS = sorted(["list_domains", "add_domain", "remove_domain", "get_git_source",
                         "connect_git_source", "deploy_git_source", "disconnect_git_source",
                         "list_previews"])


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class McpEndToEnd(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="slipway-mcp-")
        data = os.path.join(self.work, "platform")
        self.data = data
        self.api_port, self.gateway_port = free_port(), free_port()
        self.platform = subprocess.Popen(
            [SLIPWAY, "platform", "serve", "--listen", f"127.0.0.1:{self.api_port}", "--gateway-listen",
             f"127.0.0.1:{self.gateway_port}", "--data-dir", data, "--builder", "native",
             "--gateway-http-listen", f"127.0.0.1:{free_port()}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        token_file = os.path.join(data, "bootstrap-token")
        deadline = time.time() + 30
        while not os.path.exists(token_file) and time.time() < deadline:
            time.sleep(0.1)
        with open(token_file) as f:
            self.token = f.read().strip()

    def tearDown(self):
        self.platform.terminate()
        self.platform.wait(timeout=30)

    def test_the_whole_workflow(self):
        asyncio.run(self.workflow())

    # The person at the client: what they were asked, and whether they say yes.
    asked = []
    says_yes = True

    async def the_person(self, context, params):
        self.asked.append(params.message)
        if getattr(params, "url", None):
            # URL mode: the person types the secret on the platform's page, in their browser.
            await asyncio.get_running_loop().run_in_executor(None, self.type_on_page, params.url)
            return ElicitResult(action="accept")
        return ElicitResult(action="accept", content={"confirm": self.says_yes})

    def type_on_page(self, url):
        self.assertTrue(url.startswith(f"http://127.0.0.1:{self.api_port}/secrets/enter?page="), url)
        page = urllib.request.urlopen(url).read().decode()
        self.assertIn("db/credentials", page)
        form = urllib.parse.urlencode([("key", "TOKEN"), ("value", "typed-3"), ("action", "save")]).encode()
        saved = urllib.request.urlopen(urllib.request.Request(url, data=form, method="POST")).read().decode()
        self.assertIn("Saved", saved)

    async def call(self, session, tool, args, progress=None):
        result = await session.call_tool(tool, args, progress_callback=progress)
        data = result.structured_content
        if data is None:
            data = json.loads(result.content[0].text)
        if not result.is_error:
            # Every result conforms to the outputSchema its tool publishes.
            jsonschema.validate(data, self.schemas[tool])
        return data

    async def workflow(self):
        env = dict(os.environ, SLIPWAY_PLATFORM_URL=f"http://127.0.0.1:{self.api_port}", SLIPWAY_TOKEN=self.token)
        params = StdioServerParameters(command=SLIPWAY, args=["mcp"], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=self.the_person) as session:
                init = await session.initialize()
                self.assertIn("get_available_templates", init.instructions)
                tools = await session.list_tools()
                names = sorted(t.name for t in tools.tools)
                listed = subprocess.run([SLIPWAY, "tools"], capture_output=True, text=True, check=True).stdout
                expected = sorted(line.split()[0] for line in listed.splitlines() if line.strip())
                self.assertEqual(names, expected)
                self.assertEqual(names, sorted(SPEC_TOOLS + PLATFORM_TOOLS))
                for t in tools.tools:
                    self.assertEqual(t.input_schema.get("type"), "object", t.name)
                    self.assertTrue(t.description, t.name)
                    self.assertTrue(t.title, t.name)
                    self.assertEqual(t.output_schema.get("type"), "object", t.name)
                self.schemas = {t.name: t.output_schema for t in tools.tools}

                templates = await self.call(session, "get_available_templates", {})
                self.assertEqual(len(templates["templates"]), 6)
                self.assertEqual(set(templates["templates"][0]), {"name", "description", "language", "default_port"})

                scaffold = await self.call(session, "scaffold_app", {
                    "app_name": "mcp-demo", "app_type": "python-api", "output_directory": self.work})
                self.assertTrue(scaffold["success"], scaffold)
                project = scaffold["project_path"]
                self.assertIn("devfile.yaml", scaffold["files_created"])

                report = await self.call(session, "validate_devfile", {"devfile_path": os.path.join(project, "devfile.yaml")})
                self.assertEqual((report["valid"], report["errors"]), (True, []))

                reg = await self.call(session, "register_app", {
                    "name": "mcp-demo", "display_name": "MCP Demo", "project_path": project})
                self.assertTrue(reg["success"], reg)
                app_id = reg["app_id"]
                self.assertTrue(os.path.exists(os.path.join(project, ".app")))

                # Secrets: registered first, so the app's access control exists.
                app_secret = {"secret_type": "app", "app_id": app_id, "secret_path": "db/credentials"}
                created = await self.call(session, "create_secret", dict(
                    app_secret, data=json.dumps({"DB_PASSWORD": "pw-1"}), metadata=json.dumps({"owner": "ops"})))
                self.assertTrue(created["success"], created)
                self.assertEqual(created["version"], 1)
                bad = await self.call(session, "create_secret", dict(app_secret, secret_path="/abs", data="{}"))
                self.assertFalse(bad["success"])
                self.assertIn("secret_path", bad["error"])
                self.assertIn("retryable", bad)
                updated = await self.call(session, "update_secret", dict(app_secret, data=json.dumps({"DB_PASSWORD": "pw-2"})))
                self.assertEqual((updated["success"], updated["version"]), (True, 2), updated)
                got = await self.call(session, "get_secret", app_secret)
                self.assertEqual((got["data"], got["metadata"], got["version"]),
                                 ({"DB_PASSWORD": "pw-2"}, {"owner": "ops"}, 2), got)
                first = await self.call(session, "get_secret", dict(app_secret, version=1))
                self.assertEqual(first["data"], {"DB_PASSWORD": "pw-1"})
                # No value given: the person types it on the platform's page (URL-mode
                # elicitation), the call waits for it and answers with the version only.
                typed = await self.call(session, "update_secret", app_secret)
                self.assertEqual((typed["success"], typed["version"]), (True, 3), typed)
                self.assertNotIn("typed-3", json.dumps(typed))
                self.assertEqual((await self.call(session, "get_secret", app_secret))["data"], {"TOKEN": "typed-3"})
                listed_secrets = await self.call(session, "list_secrets", {"secret_type": "app", "app_id": app_id, "prefix": "db/"})
                self.assertEqual(listed_secrets["paths"], ["db/credentials"], listed_secrets)
                shared = await self.call(session, "share_secret", {
                    "from_secret_type": "app", "app_id": app_id, "from_secret_path": "db/credentials",
                    "to_shared_path": "team/db"})
                self.assertTrue(shared["success"], shared)
                again = await self.call(session, "share_secret", {
                    "from_secret_type": "app", "app_id": app_id, "from_secret_path": "db/credentials",
                    "to_shared_path": "team/db"})
                self.assertFalse(again["success"])
                removed = await self.call(session, "delete_secret", {"secret_type": "shared", "secret_path": "team/db"})
                self.assertTrue(removed["success"], removed)

                # The client asks for progress, and hears each long step of the build as it starts.
                steps = []

                async def progressed(progress, total, message):
                    steps.append((progress, message))

                build = await self.call(session, "build_app", {"project_path": project}, progress=progressed)
                self.assertTrue(build["success"], build)
                self.assertTrue(any("building" in (m or "") for _, m in steps), steps)
                self.assertEqual([p for p, _ in steps], list(range(1, len(steps) + 1)), steps)
                for key in ("app_id", "app_url", "build_id", "image_uri", "service_urls"):
                    self.assertIn(key, build)
                self.assertEqual(build["app_id"], app_id)
                # The URLs come with the build (known from the first upload on), one per service.
                self.assertTrue(build["app_url"], build)
                self.assertEqual(sorted(build["service_urls"]), ["api"], build)

                status = None
                deadline = time.time() + 180
                while time.time() < deadline:
                    status = await self.call(session, "get_app_status", {"app_id": app_id})
                    if status["status"] in ("RUNNING", "FAILED"):
                        break
                    await asyncio.sleep(1)
                self.assertEqual(status["status"], "RUNNING", status)
                # Reachable by a plain HTTP client (an assistant's fetch tool), not only a browser.
                self.assertTrue(status["app_url"].startswith("http://127.0.0.1:"), status)
                self.assertEqual(status["app_url"], build["app_url"], status)
                for url in [build["app_url"], *build["service_urls"].values()]:
                    with urllib.request.urlopen(url + "/health", timeout=10) as answer:
                        self.assertEqual(answer.status, 200)

                logs = await self.call(session, "get_app_logs", {"app_id": app_id, "latest_only": True})
                self.assertTrue(logs["success"])
                self.assertTrue(all("url" in entry for entry in logs["logs"]) and logs["logs"], logs)

                # Sharing, as a user would ask for it.
                added = subprocess.run([SLIPWAY, "platform", "user", "add", "--data-dir", self.data,
                                        "--email", "dana@example.org", "--name", "Dana"],
                                       capture_output=True, text=True, check=True)
                dana = json.loads(added.stdout)
                users = await self.call(session, "list_account_users", {})
                self.assertTrue(users["success"], users)
                self.assertIn("dana@example.org", [u["email"] for u in users["users"]])
                self.assertEqual(set(users["users"][0]), {"id", "email", "name"})
                roles = await self.call(session, "list_grantable_roles", {"app_id": app_id})
                self.assertEqual(roles["roles"], ["owner", "editor", "viewer"], roles)
                granted = await self.call(session, "grant_app_role", {
                    "app_id": app_id, "role": "editor", "user_id": "dana@example.org"})
                self.assertTrue(granted["success"], granted)
                self.assertTrue(granted["message"])
                perms = await self.call(session, "list_app_permissions", {"app_id": app_id})
                # The spec's keys, plus whether the caller may revoke the grant and why not.
                self.assertEqual(set(perms["users"][0]),
                                 {"user_id", "email", "name", "role", "revocable", "revoke_note"})
                self.assertIn(("dana@example.org", "editor"), [(u["email"], u["role"]) for u in perms["users"]])
                revoked = await self.call(session, "revoke_app_role", {
                    "app_id": app_id, "role": "editor", "user_id": dana["id"]})
                self.assertTrue(revoked["success"], revoked)
                perms = await self.call(session, "list_app_permissions", {"app_id": app_id})
                self.assertEqual([u["role"] for u in perms["users"]], ["owner"])
                last = await self.call(session, "revoke_app_role", {
                    "app_id": app_id, "role": "owner", "user_id": perms["users"][0]["user_id"]})
                self.assertFalse(last["success"])
                self.assertIn("last owner", last["error"])

                # Custom domains: added (it waits for DNS that points here), listed, a wildcard
                # refused as a tool error naming the field, removed.
                added = await self.call(session, "add_domain", {"app_id": app_id, "name": "demo.example.org"})
                self.assertEqual((added["success"], added["name"], added["state"]), (True, "demo.example.org", "pending"), added)
                listed_domains = await self.call(session, "list_domains", {"app_id": app_id})
                self.assertEqual([d["name"] for d in listed_domains["domains"]], ["demo.example.org"], listed_domains)
                wildcard = await session.call_tool("add_domain", {"app_id": app_id, "name": "*.example.org"})
                self.assertTrue(wildcard.is_error)
                refused = json.loads(wildcard.content[0].text)
                self.assertEqual((refused["success"], refused.get("field")), (False, "name"), refused)
                self.assertIn("wildcard", refused["error"])
                removed = await self.call(session, "remove_domain", {"app_id": app_id, "name": "demo.example.org"})
                self.assertEqual(removed["removed"], "demo.example.org", removed)


                # A destructive tool asks the person first; a no changes nothing.
                self.says_yes = False
                kept = await self.call(session, "disable_app", {"app_id": app_id})
                self.assertFalse(kept["success"], kept)
                self.assertIn("did not confirm", kept["error"])
                self.assertIn(app_id, self.asked[-1])
                self.assertNotEqual((await self.call(session, "get_app_status", {"app_id": app_id}))["status"], "suspended")
                self.says_yes = True
                disabled = await self.call(session, "disable_app", {"app_id": app_id})
                self.assertTrue(disabled["success"], disabled)
                self.assertEqual((await self.call(session, "get_app_status", {"app_id": app_id}))["status"], "suspended")

                enabled = await self.call(session, "enable_app", {"app_id": app_id})
                self.assertTrue(enabled["success"], enabled)
                deadline = time.time() + 120
                while time.time() < deadline:
                    status = await self.call(session, "get_app_status", {"app_id": app_id})
                    if status["status"] in ("RUNNING", "FAILED"):
                        break
                    await asyncio.sleep(1)
                self.assertEqual(status["status"], "RUNNING", status)

                # Beyond the tools: prompts and resources over the deployment history.
                prompts = {p.name: p for p in (await session.list_prompts()).prompts}
                self.assertEqual(set(prompts), {"explain_failed_deploy", "deploy_new_app"})
                self.assertEqual([a.name for a in prompts["explain_failed_deploy"].arguments], ["app_id"])
                explained = await session.get_prompt("explain_failed_deploy", {"app_id": app_id})
                text = explained.messages[0].content.text
                self.assertIn(app_id, text)
                self.assertIn('"last_good_deployment_id"', text)
                walk = await session.get_prompt("deploy_new_app", {"app_name": "shop", "app_type": "python-api"})
                walk_text = walk.messages[0].content.text
                for tool in ("scaffold_app", "validate_devfile", "register_app", "build_app", "get_app_status"):
                    self.assertIn(tool, walk_text)
                templates = (await session.list_resource_templates()).resource_templates
                self.assertEqual({t.uri_template for t in templates},
                                 {"slipway://apps/{app_id}/deployments", "slipway://apps/{app_id}/logs",
                                  "slipway://apps/{app_id}/jobs", "slipway://apps/{app_id}/notifications"})
                listed = {str(r.uri) for r in (await session.list_resources()).resources}
                history_uri = f"slipway://apps/{app_id}/deployments"
                self.assertIn(history_uri, listed)
                self.assertIn(f"slipway://apps/{app_id}/logs", listed)
                history = json.loads((await session.read_resource(history_uri)).contents[0].text)
                # The build's deployment, then the enable's (newest first), each with what it ran.
                self.assertEqual([d["cause"] for d in history[:2]], ["enable", "build"], history)
                self.assertTrue(all(d["services"] and d["services"][0]["image_digest"].startswith("sha256:")
                                    for d in history), history)
                logs_text = (await session.read_resource(f"slipway://apps/{app_id}/logs")).contents[0].text
                self.assertIn("=== api runtime", logs_text)
                # No scheduled job in this app: an empty list, not an error.
                jobs = json.loads((await session.read_resource(f"slipway://apps/{app_id}/jobs")).contents[0].text)
                self.assertEqual(jobs, [])
                # No channel hears it yet: no subscription, no delivery.
                told = json.loads((await session.read_resource(f"slipway://apps/{app_id}/notifications")).contents[0].text)
                self.assertEqual(told, {"subscriptions": [], "deliveries": []})

                # A git source over SSH: a deploy key is made and shown (the host resolves nowhere,
                # so its fetch fails: a failed deployment); a token is not an argument at all; a
                # local path is refused naming the field.
                source = await self.call(session, "connect_git_source", {
                    "app_id": app_id, "repo_url": "git@git.invalid:acme/demo.git", "path": "svc"})
                self.assertEqual((source["success"], source["auth"]), (True, "deploy_key"), source)
                self.assertTrue(source["deploy_key"].startswith("ssh-ed25519 "), source)
                with_token = await session.call_tool("connect_git_source", {
                    "app_id": app_id, "repo_url": "https://git.invalid/a.git", "token": "t"})
                self.assertTrue(with_token.is_error)
                local = await session.call_tool("connect_git_source", {"app_id": app_id, "repo_url": "/srv/a.git"})
                self.assertTrue(local.is_error)
                self.assertEqual(json.loads(local.content[0].text).get("field"), "repo_url")
                self.assertEqual((await self.call(session, "get_git_source", {"app_id": app_id}))["path"], "svc")
                self.assertEqual((await self.call(session, "list_previews", {"app_id": app_id}))["previews"], [])
                self.assertIn("queued", await self.call(session, "deploy_git_source", {"app_id": app_id}))
                await self.call(session, "disconnect_git_source", {"app_id": app_id})

                deleted = await self.call(session, "delete_app", {"app_id": app_id})
                self.assertTrue(deleted["success"], deleted)
                self.assertIn(".app", deleted["message"])
                gone = await self.call(session, "get_app", {"app_id": app_id})
                self.assertFalse(gone["success"])

        # Every platform call of this `slipway mcp` is in the platform's audit, with its client
        # and outcome (reported beside each answer) and never an argument's value.
        deadline = time.time() + 20
        while True:
            request = urllib.request.Request(
                f"http://127.0.0.1:{self.api_port}/v1/account/audit?limit=500",
                headers={"authorization": f"Bearer {self.token}"})
            with urllib.request.urlopen(request) as answer:
                entries = json.loads(answer.read())["entries"]
            calls = {e["subject"]: e["detail"] for e in reversed(entries) if e["action"] == "mcp.tool_called"}
            if "get_app" in calls or time.time() > deadline:
                break
            time.sleep(0.2)
        self.assertIn("(slipway mcp); success", calls.get("build_app", ""), calls)
        self.assertIn(f"app {app_id}", calls.get("delete_app", ""), calls)
        self.assertIn("not_found", calls.get("get_app", ""), calls)
        self.assertNotIn("validate_devfile", calls, "only what reaches the platform")


class McpEmbeddedPlatform(unittest.TestCase):
    """With no platform configured, `slipway mcp` starts an embedded one in-process."""

    def test_platform_tools_work_out_of_the_box(self):
        asyncio.run(self.run_embedded())

    async def run_embedded(self):
        home = tempfile.mkdtemp(prefix="slipway-mcp-home-")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLIPWAY_")}
        env.update(HOME=home, XDG_DATA_HOME=os.path.join(home, "data"), XDG_CONFIG_HOME=os.path.join(home, "config"))
        data = os.path.join(home, "data", "slipway", "embedded-platform")
        params = StdioServerParameters(command=SLIPWAY, args=["mcp"], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("register_app", {"name": "embedded-one", "display_name": "E"})
                reg = result.structured_content
                self.assertTrue(reg["success"], reg)
                listed = (await session.call_tool("list_apps", {})).structured_content
                self.assertEqual([a["name"] for a in listed["apps"]], ["embedded-one"])
                created = (await session.call_tool("create_secret", {
                    "secret_type": "user", "secret_path": "k", "data": "{\"a\": \"b\"}"})).structured_content
                self.assertTrue(created["success"], created)
                self.assertTrue(os.path.exists(os.path.join(data, "embedded-url")))
                self.assertTrue(os.path.exists(os.path.join(data, "vault.key")))
        # The client hung up: the embedded platform stopped and said so by removing its URL.
        deadline = time.time() + 30
        while os.path.exists(os.path.join(data, "embedded-url")) and time.time() < deadline:
            time.sleep(0.2)
        self.assertFalse(os.path.exists(os.path.join(data, "embedded-url")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
