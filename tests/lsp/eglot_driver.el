;;; eglot_driver.el --- open an SVG with the shipped svgloo-eglot.el and print what eglot gets  -*- lexical-binding: t; -*-
;; Run by tests/lsp/test_eglot.py:
;;   emacs --batch -l eglot_driver.el SVGLOO-EL PYTHON REFERENCE FILE
;; Prints one line "SVGLOO-DIAGNOSTICS <json>" with the first publishDiagnostics params
;; eglot handled for FILE, then exits; exit 2 after 120 s without one.

(require 'package)
(package-initialize)
(require 'json)

(let* ((args command-line-args-left)
       (config (nth 0 args)) (python (nth 1 args)) (reference (nth 2 args))
       (file (nth 3 args)) (seen nil))
  (setq command-line-args-left nil)
  (setq svgloo-command (list python "-m" "svgloo" "lsp"))
  (load config nil t)
  (setq svgloo-settings
        (list :backbone "pixel" :reference reference :prompt ""
              :diagnostics '(:harmful t :invisible t :purity :json-false)
              :useDaemon :json-false :renderSize 192))
  (setq-default eglot-workspace-configuration (list (cons :svgloo svgloo-settings)))
  (advice-add 'eglot-handle-notification :before
              (lambda (_server method &rest params)
                (when (and (eq method 'textDocument/publishDiagnostics)
                           (string-suffix-p (file-name-nondirectory file)
                                            (plist-get params :uri)))
                  (setq seen params))))
  (find-file file)
  ;; eglot-ensure connects from post-command-hook; batch mode has no command loop.
  (run-hooks 'post-command-hook)
  (with-timeout (120 (princ "SVGLOO-TIMEOUT\n") (kill-emacs 2))
    (while (not seen) (accept-process-output nil 0.2)))
  (princ (concat "SVGLOO-DIAGNOSTICS " (json-encode seen) "\n"))
  (ignore-errors (eglot-shutdown (eglot-current-server)))
  (kill-emacs 0))
