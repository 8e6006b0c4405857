"""End-to-end test of `slipway mcp` through the official Python MCP client (stdio).

Starts a real platform server, then drives the tool server the way an assistant would:
list tools, templates -> scaffold -> validate -> register -> build -> status until RUNNING ->
logs -> disable -> enable -> delete, checking the result keys the spec names.
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

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SLIPWAY = os.environ["SLIPWAY_BIN"]


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
        self.api_port, self.gateway_port = free_port(), free_port()
        self.platform = subprocess.Popen(
            [SLIPWAY, "platform", "serve", "--listen", f"127.0.0.1:{self.api_port}", "--gateway-listen",
             f"127.0.0.1:{self.gateway_port}", "--data-dir", data, "--builder", "native"],
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

    async def call(self, session, tool, args):
        result = await session.call_tool(tool, args)
        data = result.structured_content
        if data is None:
            data = json.loads(result.content[0].text)
        return data

    async def workflow(self):
        env = dict(os.environ, SLIPWAY_PLATFORM_URL=f"http://127.0.0.1:{self.api_port}", SLIPWAY_TOKEN=self.token)
        params = StdioServerParameters(command=SLIPWAY, args=["mcp"], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                self.assertIn("get_available_templates", init.instructions)
                tools = await session.list_tools()
                names = sorted(t.name for t in tools.tools)
                listed = subprocess.run([SLIPWAY, "tools"], capture_output=True, text=True, check=True).stdout
                expected = sorted(line.split()[0] for line in listed.splitlines() if line.strip())
                self.assertEqual(names, expected)
                for t in tools.tools:
                    self.assertEqual(t.input_schema.get("type"), "object", t.name)
                    self.assertTrue(t.description, t.name)

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

                build = await self.call(session, "build_app", {"project_path": project})
                self.assertTrue(build["success"], build)
                for key in ("app_id", "app_url", "build_id", "image_uri"):
                    self.assertIn(key, build)
                self.assertEqual(build["app_id"], app_id)

                status = None
                deadline = time.time() + 180
                while time.time() < deadline:
                    status = await self.call(session, "get_app_status", {"app_id": app_id})
                    if status["status"] in ("RUNNING", "FAILED"):
                        break
                    await asyncio.sleep(1)
                self.assertEqual(status["status"], "RUNNING", status)
                self.assertTrue(status["app_url"].startswith("http://mcp-demo.localhost:"), status)

                logs = await self.call(session, "get_app_logs", {"app_id": app_id, "latest_only": True})
                self.assertTrue(logs["success"])
                self.assertTrue(all("url" in entry for entry in logs["logs"]) and logs["logs"], logs)

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

                deleted = await self.call(session, "delete_app", {"app_id": app_id})
                self.assertTrue(deleted["success"], deleted)
                self.assertIn(".app", deleted["message"])
                gone = await self.call(session, "get_app", {"app_id": app_id})
                self.assertFalse(gone["success"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
