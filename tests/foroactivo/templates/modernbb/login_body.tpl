<!-- /login is not an editable template: the form follows the fields of Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/prosilver/mod_login.tpl and what live clients send (username, password, autologin, login, hidden redirect) -->
<form action="/login" method="post" name="form_login">
<div class="panel"><div class="inner"><span class="corners-top"><span></span></span>
<div class="content">
	<h2 class="login-title">Conectarse</h2>
	{ERROR_BOX}
	<fieldset class="fields1">
	<dl><dt><label for="username">Nombre de usuario:</label></dt><dd><input type="text" tabindex="1" name="username" id="username" size="25" value="" class="inputbox autowidth" /></dd></dl>
	<dl><dt><label for="password">Contraseña:</label></dt><dd><input type="password" tabindex="2" id="password" name="password" size="25" class="inputbox autowidth" /></dd></dl>
	<!-- BEGIN switch_captcha --><dl><dd><div class="g-recaptcha" data-sitekey="6Lc-test"></div></dd></dl><!-- END switch_captcha -->
	<dl><dd><label for="autologin"><input type="checkbox" name="autologin" id="autologin" tabindex="4" class="checkbox" checked="checked" /> Conectarse automáticamente en cada visita</label></dd></dl>
	<dl><dt>&nbsp;</dt><dd>{S_HIDDEN_FIELDS}<input type="submit" name="login" tabindex="6" value="{L_LOGIN}" class="button1" /></dd></dl>
	</fieldset>
</div>
<span class="corners-bottom"><span></span></span></div></div>
</form>
