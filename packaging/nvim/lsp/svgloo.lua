-- svgloo language server for Neovim >= 0.11 (vim.lsp.config style).
--
-- Install: copy this file to ~/.config/nvim/lsp/svgloo.lua, then in init.lua:
--   vim.lsp.enable('svgloo')
-- Override any field with vim.lsp.config('svgloo', { ... }) before enabling.
-- See packaging/nvim/README.md.

-- Analysis settings; the server reads them as initialization options and through
-- workspace/configuration (section "svgloo"), which Neovim answers from `settings`.
local defaults = {
  backbone = 'auto', -- "auto" | "pixel" | "clip"
  reference = '', -- path to a reference image
  prompt = '', -- text prompt
  -- helpfulThreshold / harmfulThreshold: unset = the backbone's own (clip: the paper's
  -- +/-0.005; pixel: +/-0.0008, calibrated); set numbers here to override.
  diagnostics = { harmful = true, invisible = true, purity = true, maxPerDocument = 50 },
  useDaemon = true,
  renderSize = 384,
}

---@type vim.lsp.Config
return {
  -- LSP over stdio. With a Python that has svgloo installed but no `svgloo` script on
  -- PATH: cmd = { '/path/to/python', '-m', 'svgloo', 'lsp' }.
  cmd = { 'svgloo', 'lsp' },
  -- Neovim detects *.svg as filetype "svg".
  filetypes = { 'svg' },
  root_markers = { 'svgloo.toml', '.git' },
  settings = { svgloo = vim.deepcopy(defaults) },
  init_options = vim.deepcopy(defaults),
  -- Send settings.svgloo as the initialization options too, so that overriding
  -- `settings` alone (vim.lsp.config('svgloo', { settings = { svgloo = {...} } }))
  -- reaches the server from the first request on.
  before_init = function(params, config)
    local settings = (config.settings or {}).svgloo or {}
    params.initializationOptions = vim.tbl_deep_extend('force', config.init_options or {}, settings)
  end,
}
