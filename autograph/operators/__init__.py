"""What generated code calls at run time (as `ag__.<name>`)."""
from .control_flow import for_stmt, if_exp, if_stmt, while_stmt  # noqa: F401
from .control_flow import unsupported_in_tensor_control_flow  # noqa: F401
from .data_structures import (list_append, list_extend, list_insert, list_pop,  # noqa: F401
                              list_stack, new_list, starred)
from .exceptions import after_finally, assert_stmt, before_finally, try_stmt  # noqa: F401
from .raises import raised  # noqa: F401
from .logical import and_, compare_chain, in_, not_, or_  # noqa: F401
from .py_builtins import (BUILTIN_OVERRIDES, STR_METHOD_OVERRIDES, fstring,  # noqa: F401
                          percent_format, str_format)
from .scopes import super_, user_dir, user_locals, without_name  # noqa: F401
from .variables import Undefined, UndefinedReturnValue, is_none, ld, ret  # noqa: F401
from .variables import match_singleton, match_value  # noqa: F401
