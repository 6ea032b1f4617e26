;;; svgloo-eglot.el --- svgloo's language server in Emacs with eglot  -*- lexical-binding: t; -*-

;; Load from init.el:  (load "/path/to/svgloo/packaging/emacs/svgloo-eglot.el")
;; Needs eglot (built in from Emacs 29; `M-x package-install eglot', or Debian's
;; elpa-eglot, on Emacs 28) and `svgloo lsp' runnable from Emacs's exec-path.

;;; Commentary:
;; Emacs opens .svg files in image-mode (a picture, no text): map them to nxml-mode,
;; tell eglot to run `svgloo lsp' there, and start it when an SVG opens.  The analysis
;; settings go to the server as initialization options and answer workspace/configuration
;; (section "svgloo").

;;; Code:

(require 'eglot)

(defvar svgloo-settings
  '(:backbone "auto" :reference "" :prompt ""
    ;; :helpfulThreshold / :harmfulThreshold unset: the backbone's own thresholds
    :diagnostics (:harmful t :invisible t :purity t :maxPerDocument 50)
    :useDaemon t :renderSize 384)
  "Settings sent to `svgloo lsp' (the same keys as in the other editors).")

(defvar svgloo-command '("svgloo" "lsp")
  "How to start the server, e.g. (\"/path/to/venv/bin/python\" \"-m\" \"svgloo\" \"lsp\").")

;; .svg as XML text, not as a picture.
(add-to-list 'auto-mode-alist '("\\.svg\\'" . nxml-mode))

(defun svgloo--contact (&optional _interactive)
  "The server command with its initialization options (eglot's contact format)."
  (append svgloo-command (list :initializationOptions svgloo-settings)))

(add-to-list 'eglot-server-programs '(nxml-mode . svgloo--contact))

;; Answer workspace/configuration for the "svgloo" section.
(setq-default eglot-workspace-configuration
              (list (cons :svgloo svgloo-settings)))

(defun svgloo--maybe-start ()
  "Start eglot in SVG buffers only (nxml-mode also serves other XML files)."
  (when (and buffer-file-name (string-match-p "\\.svg\\'" buffer-file-name))
    (eglot-ensure)))

(add-hook 'nxml-mode-hook #'svgloo--maybe-start)

(provide 'svgloo-eglot)
;;; svgloo-eglot.el ends here
