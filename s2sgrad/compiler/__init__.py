"""The compiler: a Python function's source in, its forward-with-saves and adjoint (or its
tangent function) out, as readable Python. ``pipeline`` runs the passes in this order, each
a module (or package) that opens with its contract:

    parse        the function's source, its parameters, globals and closure (``sourcefile``)
    fence        constructs refused whatever they compute, at the user's line
    normalize/   one operation a statement, with fresh names for temporaries
    analyze/     what every value is, which operation each statement performs, activity
    aliasing     which names share memory; in-place updates followed or refused (``slots``:
                 which values each container may hold)
    reverse/     forward with saves and the adjoint, from the rules (``templates``)
    tangent      (forward mode, instead of reverse and optimize) the tangent function, from
                 each name's tangent (``dots``) and the rules' (``jvprules``); ``batching``
                 for many directions at once
    optimize     the adjoint made lean and the saves decided (``simplify``, ``inplace``,
                 ``stacks``, ``coalesce``), through the arrays' library (``s2sgrad.backends``)
    codegen      the functions rendered and compiled (``compiled`` holds the result)

``function`` is what ``@grad`` returns, ``derivatives`` what ``gradient`` returns, and
``higher`` compiles a derivative of a derivative from first-order pieces. ``statements`` is
the one table of statement kinds every pass walks through; ``validity`` decides whether a
compile is still valid.
"""
