"""Converters: one pass per module, applied in this order by `conversion.transform`.

 1. directives               ag.set_loop_options(...) -> loop annotations
 2. declarations             bare `x: int` -> declared at the top of its function
 3. unsupported              `try` in control flow -> a check naming it in tensor blocks
 4. exceptions               raise X -> raise ag__.raised(X); `try` notes the graph's checks
 5. match_statements         match -> if/elif chain (literal, value, capture, wildcard, |, guards)
 6. finally_jumps            a jump in `finally` discards the exception in flight
 7. break_statements         break -> flag + `continue`, loop test / extra test, `else:`
 8. continue_statements      continue -> flag, rest of the body guarded
 9. return_statements        early/nested return -> do_return / retval_, guards
    (finally_jumps.check_lowered: a `finally` the `try`'s jump would cut short is refused)
10. asserts                  assert -> ag__.assert_stmt
11. lists                    l.append(x) / l.pop() -> ag__.list_append / ag__.list_pop
12. call_trees               f(x) -> ag__.converted_call(f, (x,), None); locals() & co.
13. control_flow             if/while/for -> ag__.if_stmt / while_stmt / for_stmt
14. conditional_expressions  a if c else b -> ag__.if_exp
15. logical_expressions      and/or/not, chained comparisons -> ag__.and_/or_/not_/compare_chain
16. f_strings                f"..." -> ag__.fstring (printed with a graph's run-time values)

Converters 14-16 run as one walk of the tree (they rewrite different nodes).

Generators and async functions nested in the converted function are left as written
(conversion._scan marks them), and `ag__` stands for the conversion's namespace name
(pyct/naming.py).

Jumps are lowered before control flow so that the lowered flags become ordinary
state; calls are wrapped before control flow so that the functions the control
flow converter generates are not wrapped; expressions are converted last, inside
the tests that control flow moved into functions.
"""
