<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<!-- local Foroactivo (tests/foroactivo/site.py), modernbb version: overall_header follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/modernbb/overall_header.tpl (trimmed to the head, HOSTING_JS and the nav bar); the body below: {TEMPLATE} -->
<html xmlns="http://www.w3.org/1999/xhtml" dir="ltr" lang="es" xml:lang="es">
<head>
<meta http-equiv="content-type" content="text/html; charset={S_CONTENT_ENCODING}" />
{META}
<title>{PAGE_TITLE}</title>
<script type="text/javascript">var _userdata = new Object(); _userdata["session_logged_in"] = {LOGGED_IN}; _userdata["username"] = "{USER_NAME}"; _userdata["user_id"] = {USER_ID};</script>
</head>
<body id="modernbb">
<a id="top" name="top" accesskey="t"></a>
<div id="wrap">
	<div id="page-header">
		<div class="navbar">
			<ul class="linklist navlinks">
				<li><!-- BEGIN switch_user_logged_in --><a class="mainmenu" href="{U_LOGIN_LOGOUT}" rel="nofollow" id="logout">{L_LOGIN_LOGOUT}</a><!-- END switch_user_logged_in --><!-- BEGIN switch_user_logged_out --><a class="mainmenu" href="/login" rel="nofollow">{L_LOGIN_LOGOUT}</a><!-- END switch_user_logged_out --></li>
			</ul>
		</div>
	</div>
	<div id="page-body">
