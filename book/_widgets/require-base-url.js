// Loaded on widget pages between require.js and embed-amd.js (see nb_ipywidgets_js in _config.yml).
// RequireJS names each bundled widget module after its package ("@jupyter-widgets/controls"), and
// the module's CSS asks for its FontAwesome font relative to that module's URL. By default that URL
// is under the page's own folder, so every page folder would need a copy of the font; resolving
// modules against the vendored folder next to this file makes the font load from one place,
// where scripts/vendor_widgets.py puts it.
require.config({ baseUrl: new URL("vendor/", document.currentScript.src).href });

// The widget manager typesets labels with MathJax 2's API (MathJax.Hub.Queue), but the book loads
// MathJax 3, which has no Hub: without this every slider label throws a TypeError. Give whichever
// MathJax object is current -- Sphinx's configuration object first, then MathJax 3 itself when it
// replaces the global -- a Hub whose Queue typesets the element with MathJax 3.
(function () {
  function addHub(mathJax) {
    if (mathJax && typeof mathJax === "object" && !mathJax.Hub) {
      mathJax.Hub = {
        Queue: function (job) {
          var element = job && job[2];
          if (element && typeof window.MathJax.typesetPromise === "function") {
            window.MathJax.typesetPromise([element]).catch(function () {});
          }
        },
      };
    }
    return mathJax;
  }
  var current = addHub(window.MathJax);
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: function () { return current; },
    set: function (value) { current = addHub(value); },
  });
})();
