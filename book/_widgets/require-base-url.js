// Loaded on widget pages between require.js and embed-amd.js (see nb_ipywidgets_js in _config.yml).
// RequireJS names each bundled widget module after its package ("@jupyter-widgets/controls"), and
// the module's CSS asks for its FontAwesome font relative to that module's URL. By default that URL
// is under the page's own folder, so every page folder would need a copy of the font; resolving
// modules against the vendored folder next to this file makes the font load from one place,
// where scripts/vendor_widgets.py puts it.
require.config({ baseUrl: new URL("vendor/", document.currentScript.src).href });
