import { definePlugin } from '../../src/plugin-host/sdk.ts'

// A theme is its stylesheet (manifest `ui.css`), which the console serves while the theme is switched on.
export default definePlugin({
  setup() {},
})
