// Loaded on widget pages just before vendor/embed.js (see nb_ipywidgets_js in _config.yml).

// The widget manager typesets labels with MathJax 2's API (MathJax.Hub.Queue), but the book loads
// MathJax 3, which has no Hub: without this every slider label throws a TypeError. Give whichever
// MathJax object is current -- Sphinx's configuration object first, then MathJax 3 itself when it
// replaces the global -- a Hub whose Queue typesets the element with MathJax 3. Pages without math
// load no MathJax, and the widget manager then typesets nothing.
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

// A slider's handle (role="slider", reached with Tab, moved with the arrow keys) has no accessible
// name: the widget's description sits in a <label> that is not tied to it. Name every handle by
// its label (aria-labelledby) and say the readout (aria-valuetext), not the position's index.
(function () {
  var counter = 0;
  function nameHandle(handle) {
    var widget = handle.closest(".widget-slider, .widget-hslider, .widget-vslider");
    if (!widget) return;
    var label = widget.querySelector(".widget-label");
    if (label && label.textContent.trim() && !handle.hasAttribute("aria-labelledby")) {
      if (!label.id) label.id = "widget-slider-label-" + (counter += 1);
      handle.setAttribute("aria-labelledby", label.id);
    }
    var readout = widget.querySelector(".widget-readout");
    if (readout && readout.textContent.trim() && handle.getAttribute("aria-valuetext") !== readout.textContent.trim()) {
      handle.setAttribute("aria-valuetext", readout.textContent.trim());
    }
  }
  function nameAll() {
    document.querySelectorAll(".noUi-handle").forEach(nameHandle);
    // Image widgets have no alt text. A frames widget (infer_lib.page.widgets) shows one frame at a
    // time, the one its sliders select, so the shown figure is named by the sliders' readouts:
    // "figure at batch size 8".
    document.querySelectorAll(".infer-frames").forEach(function (container) {
      var parts = [];
      container.querySelectorAll(".infer-frames-slider").forEach(function (slider) {
        var label = slider.querySelector(".widget-label");
        var readout = slider.querySelector(".widget-readout");
        parts.push(((label ? label.textContent : "") + " " + (readout ? readout.textContent : "")).trim());
      });
      var alt = "figure at " + parts.join(", ");
      container.querySelectorAll("img").forEach(function (img) {
        if (img.getAttribute("alt") !== alt) img.setAttribute("alt", alt);
      });
    });
  }
  new MutationObserver(function (mutations) {
    for (var i = 0; i < mutations.length; i += 1) {
      var target = mutations[i].target;
      var element = target.nodeType === 1 ? target : target.parentElement;
      if (element && element.closest(".jupyter-widgets")) {
        nameAll();
        return;
      }
    }
  }).observe(document.documentElement, { childList: true, subtree: true, characterData: true });
})();
