import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

const apiUrl = process.env.API_URL || "http://127.0.0.1:3001";

// https://vite.dev/config/
export default defineConfig({
  plugins: [react()],
  server: {
    host: "0.0.0.0",
    // `npm run dev`: forward /api/* to the api service, like server.js does in production.
    proxy: {
      "/api": { target: apiUrl, changeOrigin: true, rewrite: (path) => path.replace(/^\/api/, "") },
    },
  },
});
